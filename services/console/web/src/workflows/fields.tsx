import { Box, Text, TextInput, Textarea } from '@mantine/core';
import { createContext, useContext, useEffect, useRef, useState, type ReactNode } from 'react';
import { textOn } from '../components/RunStatus.tsx';
import { insertAt, preview, previewWithExpressions, segments, type PreviewScope } from './templates.ts';

/**
 * The field a picked variable goes into: the templated field focused last, with its own setter.
 * Inputs keep their selection after losing focus, so a click in the picker (which takes focus)
 * still inserts at the caret the person left.
 */
export interface InsertTarget {
  el: HTMLInputElement | HTMLTextAreaElement;
  label: string;
  set: (value: string) => void;
}

export interface FieldsContext {
  /** A templated field got focus: picked variables go into it from now on. */
  setTarget: (target: InsertTarget) => void;
  /**
   * A templated field appeared: it becomes the target when there is none on screen (the first field
   * of a node just selected), so the picker never names, nor inserts into, a field of another node.
   */
  offerTarget?: (target: InsertTarget) => void;
  scope: PreviewScope;
  onTarget: (label: string | null) => void;
}

const Ctx = createContext<FieldsContext | null>(null);
export const FieldsProvider = ({ value, children }: { value: FieldsContext; children: ReactNode }) => <Ctx.Provider value={value}>{children}</Ctx.Provider>;
export const useFields = () => useContext(Ctx);

/** Inserts `text` into the last focused templated field at its caret; false when there is none. */
export function insertIntoTarget(target: InsertTarget | null, text: string): boolean {
  if (!target || !target.el.isConnected) return false;
  const { el } = target;
  const next = insertAt(el.value, el.selectionStart, el.selectionEnd, text);
  target.set(next.value);
  requestAnimationFrame(() => {
    el.focus();
    el.setSelectionRange(next.caret, next.caret);
  });
  return true;
}

/** The value with its variables and expressions highlighted, and what it renders to with the sample payload. */
export function VariablePreview({ value, scope }: { value: string; scope: PreviewScope }) {
  const parts = segments(value);
  const expressions = parts.some((p) => p.kind === 'expression');
  // Expressions evaluate asynchronously (JSONata); the last value typed wins.
  const [evaluated, setEvaluated] = useState<{ value: string; text: string; missing: string[]; error: string | null } | null>(null);
  useEffect(() => {
    if (!expressions) return;
    let current = true;
    void previewWithExpressions(value, scope).then((r) => {
      if (current) setEvaluated({ value, ...r });
    });
    return () => {
      current = false;
    };
  }, [value, scope, expressions]);
  if (!parts.some((p) => p.kind !== 'text')) return null;
  const rendered = expressions ? (evaluated?.value === value ? evaluated : { text: '…', missing: [], error: null }) : { ...preview(value, scope), error: null };
  return (
    <Box mt={6} p={8} bg="gray.0" style={{ borderRadius: 8, border: '1px solid var(--mantine-color-gray-2)' }} data-testid="variable-preview">
      <Text size="xs" style={{ wordBreak: 'break-word' }}>
        {parts.map((p, i) =>
          p.kind === 'text' ? (
            <span key={i}>{p.text}</span>
          ) : (
            <mark key={i} className="fd-variable">
              {p.text}
            </mark>
          ),
        )}
      </Text>
      {rendered.error ? (
        <Text size="xs" mt={4} c={textOn('red')} data-testid="preview-error">
          {rendered.error}
        </Text>
      ) : (
        <Text size="xs" mt={4} c="dimmed">
          Preview:{' '}
          <Text span size="xs" c="dark.7" fw={550} data-testid="preview-text">
            {rendered.text || '(empty)'}
          </Text>
        </Text>
      )}
      {rendered.missing.length > 0 && (
        <Text size="xs" mt={2} c={textOn('orange')}>
          Empty with the sample: {rendered.missing.map((m) => `{{${m}}}`).join(', ')}
        </Text>
      )}
    </Box>
  );
}

/** A node parameter that may hold variables: focus it, then pick a variable to insert at the caret. */
export function TemplateField({
  label,
  value,
  onChange,
  multiline,
  description,
  placeholder,
  required,
  error,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  multiline?: boolean;
  description?: ReactNode;
  placeholder?: string;
  required?: boolean;
  error?: string;
}) {
  const ctx = useFields();
  const ref = useRef<HTMLInputElement & HTMLTextAreaElement>(null);
  // The target keeps the field's latest setter: a setter of an earlier render would put back the
  // other fields of the step as they were then.
  const latest = useRef(onChange);
  useEffect(() => {
    latest.current = onChange;
  });
  const offer = ctx?.offerTarget;
  useEffect(() => {
    if (offer && ref.current) offer({ el: ref.current, label, set: (v) => latest.current(v) });
  }, [offer, label]);
  const onFocus = () => {
    if (!ctx || !ref.current) return;
    ctx.setTarget({ el: ref.current, label, set: (v) => latest.current(v) });
    ctx.onTarget(label);
  };
  // A variable dragged from the picker goes in at the field's caret (its end if it never had focus):
  // handled here rather than left to the browser's text drop, so React's value stays the source of truth.
  const onDrop = (e: React.DragEvent<HTMLInputElement | HTMLTextAreaElement>) => {
    const text = e.dataTransfer.getData('text/plain');
    const el = ref.current;
    if (!el || !/^\{\{[^{}]+\}\}$/.test(text)) return;
    e.preventDefault();
    const focused = document.activeElement === el;
    const next = insertAt(el.value, focused ? el.selectionStart : null, focused ? el.selectionEnd : null, text);
    onChange(next.value);
    requestAnimationFrame(() => {
      el.focus();
      el.setSelectionRange(next.caret, next.caret);
    });
  };
  const common = {
    ref,
    onDrop,
    label,
    value,
    description,
    placeholder,
    required,
    error,
    onFocus,
    onChange: (e: React.ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => onChange(e.currentTarget.value),
    styles: { input: { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', fontSize: 13 } },
  };
  return (
    <div>
      {multiline ? <Textarea {...common} autosize minRows={3} maxRows={12} /> : <TextInput {...common} />}
      {ctx && <VariablePreview value={value} scope={ctx.scope} />}
    </div>
  );
}
