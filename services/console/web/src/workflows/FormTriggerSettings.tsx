import { ActionIcon, Anchor, Button, Checkbox, Code, CopyButton, Fieldset, Group, NativeSelect, Radio, Stack, Text, Textarea, TextInput } from '@mantine/core';
import { useState } from 'react';
import { IconArrowDown, IconArrowUp, IconCheck, IconCopy, IconExternalLink, IconPlus, IconTrash } from '@tabler/icons-react';
import {
  DEFAULT_FORM_THANK_YOU,
  FORM_FIELD_NAME_PATTERN,
  FORM_FIELD_TYPES,
  FORM_TRIGGER_LIMITS,
  formConfigProblem,
  formPath,
  RESERVED_FORM_FIELD_NAMES,
  type FormTriggerField,
  type FormFieldType,
} from '@flowdesk/contracts';
import type { Workflow } from '../api.ts';
import type { TriggerDraft } from './TriggerPanel.tsx';

/**
 * The form trigger's settings (docs/triggers.md, "Form"): the public URL of the form Flowdesk hosts,
 * its title and description, its fields (label, key, type, required, help, a select's options; added,
 * moved, removed), the submit button and what follows a submission (a thank-you text or a redirect).
 * A draft, saved with the workflow; refused before sending while a field needs fixing, with the
 * server's own check (formConfigProblem) as the last word.
 */

const TYPE_LABEL: Record<FormFieldType, string> = {
  text: 'Text',
  email: 'Email',
  number: 'Number',
  date: 'Date',
  select: 'Choice (select)',
  textarea: 'Long text',
};

/** The settings a new form trigger starts with: a contact form (valid, so an active workflow can switch to it). */
export const defaultFormConfig = (): Record<string, unknown> => ({
  title: 'Contact us',
  description: 'Leave your details and we will get back to you.',
  fields: [
    { name: 'name', label: 'Name', type: 'text', required: true },
    { name: 'email', label: 'Email', type: 'email', required: true },
    { name: 'message', label: 'Message', type: 'textarea' },
  ],
  thankYou: DEFAULT_FORM_THANK_YOU,
});

/** A field's key from its label: "Your e-mail" → your_e_mail (a letter first; `field` when nothing is left). */
export function keyOf(label: string): string {
  const key = label
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^[^a-z]+|_+$/g, '')
    .slice(0, 64);
  return key || 'field';
}

/** `base`, or base_2, base_3… when another field has it. */
const unique = (base: string, taken: string[]) => {
  if (!taken.includes(base)) return base;
  for (let n = 2; ; n++) if (!taken.includes(`${base}_${n}`)) return `${base}_${n}`;
};

/** What each field needs fixed, by index (the messages shown at the inputs). */
export function fieldProblems(fields: FormTriggerField[]): Record<number, { label?: string; name?: string; options?: string }> {
  const out: Record<number, { label?: string; name?: string; options?: string }> = {};
  const pattern = new RegExp(FORM_FIELD_NAME_PATTERN);
  fields.forEach((f, i) => {
    const p: { label?: string; name?: string; options?: string } = {};
    if (f.label.trim() === '') p.label = 'Give the field a label.';
    if (!pattern.test(f.name)) p.name = 'A letter, then letters, digits or _ (up to 64).';
    else if ((RESERVED_FORM_FIELD_NAMES as readonly string[]).includes(f.name)) p.name = `${f.name} is set by the submission itself.`;
    else if (fields.findIndex((g) => g.name === f.name) !== i) p.name = 'Another field has this key.';
    if (f.type === 'select') {
      const options = f.options ?? [];
      if (options.length === 0) p.options = 'Give at least one option, one per line.';
      else if (new Set(options).size !== options.length) p.options = 'Each option once.';
    }
    if (Object.keys(p).length) out[i] = p;
  });
  return out;
}

const fieldsOf = (config: Record<string, unknown>): FormTriggerField[] => (Array.isArray(config.fields) ? (config.fields as FormTriggerField[]) : []);
const text = (v: unknown) => (typeof v === 'string' ? v : '');

export function FormTriggerSettings({
  workflow,
  config,
  onDraft,
}: {
  workflow: Workflow;
  config: Record<string, unknown>;
  onDraft: (d: TriggerDraft) => void;
}) {
  const fields = fieldsOf(config);
  const problems = fieldProblems(fields);
  const redirect = config.redirectUrl !== undefined;
  // The form is served where the console is (the same public base URL: the front, or the ingress's host).
  const url = `${window.location.origin}${formPath(workflow.id)}`;

  const emit = (next: Record<string, unknown>) => {
    // Optional texts left empty are left out (the schema refuses an empty submit label).
    const clean = Object.fromEntries(Object.entries(next).filter(([k, v]) => !((k === 'description' || k === 'submitLabel') && v === '')));
    const local = fieldProblems(fieldsOf(clean));
    const first = Object.entries(local)[0];
    const problem = first
      ? `Form field ${Number(first[0]) + 1}: ${Object.values(first[1])[0]}`
      : text(clean.title).trim() === ''
        ? 'Form: give it a title.'
        : formConfigProblem(clean);
    onDraft({ config: clean, problem });
  };
  // Fields added here whose key still follows their label (by index); a key typed by hand, or one
  // saved before, stays as it is: steps may already use {{trigger.<key>}}.
  const [autoKeys, setAutoKeys] = useState<number[]>([]);
  const setFields = (next: FormTriggerField[]) => emit({ ...config, fields: next });
  const setField = (i: number, change: Partial<FormTriggerField>) => setFields(fields.map((f, j) => (j === i ? tidy({ ...f, ...change }) : f)));
  const move = (i: number, by: -1 | 1) => {
    const next = [...fields];
    [next[i], next[i + by]] = [next[i + by]!, next[i]!];
    setAutoKeys(autoKeys.map((k) => (k === i ? i + by : k === i + by ? i : k)));
    setFields(next);
  };
  const remove = (i: number) => {
    setAutoKeys(autoKeys.filter((k) => k !== i).map((k) => (k > i ? k - 1 : k)));
    setFields(fields.filter((_, j) => j !== i));
  };
  const add = () => {
    setAutoKeys([...autoKeys, fields.length]);
    setFields([
      ...fields,
      {
        name: unique(
          'field',
          fields.map((f) => f.name),
        ),
        label: '',
        type: 'text',
      },
    ]);
  };

  return (
    <Stack gap="md" role="group" aria-label="Form">
      <div>
        <Text size="sm" fw={500} mb={4}>
          Form URL
        </Text>
        <Group gap={6} wrap="nowrap" align="flex-start">
          <Code block fz={12} style={{ flex: 1, wordBreak: 'break-all', whiteSpace: 'pre-wrap' }} data-testid="form-url">
            {url}
          </Code>
          <CopyButton value={url}>
            {({ copied, copy }) => (
              <Button
                size="xs"
                variant="light"
                leftSection={copied ? <IconCheck size={14} /> : <IconCopy size={14} />}
                onClick={copy}
                aria-label={copied ? 'Copied' : 'Copy form URL'}
              >
                {copied ? 'Copied' : 'Copy'}
              </Button>
            )}
          </CopyButton>
        </Group>
        <Text size="xs" c="dimmed" mt={4}>
          Anyone with the link can fill it in while the workflow is active; each submission starts a run with the answers as <code>{'{{trigger.<key>}}'}</code>{' '}
          and <code>{'{{trigger.submittedAt}}'}</code>.{' '}
          <Anchor href={url} target="_blank" rel="noopener noreferrer" size="xs" underline="always">
            Open the form <IconExternalLink size={12} aria-hidden />
          </Anchor>
        </Text>
      </div>
      <TextInput
        label="Title"
        required
        maxLength={FORM_TRIGGER_LIMITS.titleChars}
        value={text(config.title)}
        error={text(config.title).trim() === '' ? 'Give the form a title.' : null}
        onChange={(e) => emit({ ...config, title: e.currentTarget.value })}
      />
      <Textarea
        label="Description"
        description="Shown under the title."
        autosize
        minRows={2}
        maxLength={FORM_TRIGGER_LIMITS.descriptionChars}
        value={text(config.description)}
        onChange={(e) => emit({ ...config, description: e.currentTarget.value })}
      />
      <div>
        <Text size="sm" fw={500} mb={6}>
          Fields
        </Text>
        <Stack gap={8} data-testid="form-fields">
          {fields.map((f, i) => {
            const p = problems[i] ?? {};
            const n = i + 1;
            return (
              <Fieldset key={i} p="xs" legend={`Field ${n}${f.label ? `: ${f.label}` : ''}`}>
                <Stack gap={6}>
                  <TextInput
                    label={`Field ${n} label`}
                    maxLength={FORM_TRIGGER_LIMITS.labelChars}
                    value={f.label}
                    error={p.label}
                    onChange={(e) => {
                      const label = e.currentTarget.value;
                      setField(i, { label, ...(autoKeys.includes(i) ? { name: unique(keyOf(label), others(fields, i)) } : {}) });
                    }}
                  />
                  <Group gap={6} grow align="flex-start">
                    <NativeSelect
                      label={`Field ${n} type`}
                      value={f.type}
                      data={FORM_FIELD_TYPES.map((t) => ({ value: t, label: TYPE_LABEL[t] }))}
                      onChange={(e) => setField(i, { type: e.currentTarget.value as FormFieldType })}
                    />
                    <TextInput
                      label={`Field ${n} key`}
                      ff="monospace"
                      spellCheck={false}
                      autoComplete="off"
                      value={f.name}
                      error={p.name}
                      onChange={(e) => {
                        setAutoKeys(autoKeys.filter((k) => k !== i));
                        setField(i, { name: e.currentTarget.value.trim() });
                      }}
                    />
                  </Group>
                  {f.type === 'select' && (
                    <OptionsInput
                      key={`${i}:${f.name}`}
                      label={`Field ${n} options`}
                      options={f.options ?? []}
                      error={p.options}
                      onChange={(options) => setField(i, { options })}
                    />
                  )}
                  <TextInput
                    label={`Field ${n} help`}
                    description="Optional: one line under the field."
                    maxLength={FORM_TRIGGER_LIMITS.helpChars}
                    value={f.help ?? ''}
                    onChange={(e) => setField(i, { help: e.currentTarget.value })}
                  />
                  <Group justify="space-between" wrap="nowrap">
                    <Checkbox label="Required" checked={f.required === true} onChange={(e) => setField(i, { required: e.currentTarget.checked })} />
                    <Group gap={4} wrap="nowrap">
                      <ActionIcon variant="subtle" aria-label={`Move field ${n} up`} disabled={i === 0} onClick={() => move(i, -1)}>
                        <IconArrowUp size={16} />
                      </ActionIcon>
                      <ActionIcon variant="subtle" aria-label={`Move field ${n} down`} disabled={i === fields.length - 1} onClick={() => move(i, 1)}>
                        <IconArrowDown size={16} />
                      </ActionIcon>
                      <ActionIcon variant="subtle" color="red" aria-label={`Remove field ${n}`} disabled={fields.length === 1} onClick={() => remove(i)}>
                        <IconTrash size={16} />
                      </ActionIcon>
                    </Group>
                  </Group>
                </Stack>
              </Fieldset>
            );
          })}
          <Button
            size="xs"
            variant="default"
            leftSection={<IconPlus size={14} />}
            style={{ alignSelf: 'flex-start' }}
            disabled={fields.length >= FORM_TRIGGER_LIMITS.fields}
            onClick={add}
          >
            Add field
          </Button>
        </Stack>
      </div>
      <TextInput
        label="Submit button"
        placeholder="Submit"
        maxLength={50}
        value={text(config.submitLabel)}
        onChange={(e) => emit({ ...config, submitLabel: e.currentTarget.value })}
      />
      <Radio.Group
        label="After submitting"
        value={redirect ? 'redirect' : 'text'}
        onChange={(v) => {
          const { thankYou: _t, redirectUrl: _r, ...rest } = config;
          emit(v === 'redirect' ? { ...rest, redirectUrl: '' } : { ...rest, thankYou: DEFAULT_FORM_THANK_YOU });
        }}
      >
        <Stack gap={6} mt={6}>
          <Radio value="text" label="Show a thank-you text" />
          <Radio value="redirect" label="Go to a web address" />
        </Stack>
      </Radio.Group>
      {redirect ? (
        <TextInput
          label="Redirect URL"
          type="url"
          placeholder="https://example.com/thanks"
          value={text(config.redirectUrl)}
          error={isHttpUrl(text(config.redirectUrl)) ? null : 'An http or https address, like https://example.com/thanks.'}
          onChange={(e) => emit({ ...config, redirectUrl: e.currentTarget.value.trim() })}
        />
      ) : (
        <Textarea
          label="Thank-you text"
          autosize
          minRows={2}
          maxLength={FORM_TRIGGER_LIMITS.thankYouChars}
          value={text(config.thankYou)}
          placeholder={DEFAULT_FORM_THANK_YOU}
          onChange={(e) => emit({ ...config, thankYou: e.currentTarget.value })}
        />
      )}
    </Stack>
  );
}

/** The other fields' keys. */
const others = (fields: FormTriggerField[], i: number) => fields.filter((_, j) => j !== i).map((f) => f.name);

/** A field as saved: options only for a select, no empty help, required only when true. */
function tidy(f: FormTriggerField): FormTriggerField {
  const { options, help, required, ...rest } = f;
  return { ...rest, ...(required ? { required: true } : {}), ...(help ? { help } : {}), ...(f.type === 'select' ? { options: options ?? [] } : {}) };
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

/** A select's options, one per line: the text as typed (a new line can be started), the non-empty lines saved. */
function OptionsInput({ label, options, error, onChange }: { label: string; options: string[]; error?: string; onChange: (options: string[]) => void }) {
  const [value, setValue] = useState(() => options.join('\n'));
  return (
    <Textarea
      label={label}
      description="One per line."
      autosize
      minRows={2}
      value={value}
      error={error}
      onChange={(e) => {
        setValue(e.currentTarget.value);
        onChange(
          e.currentTarget.value
            .split('\n')
            .map((o) => o.trim())
            .filter((o) => o !== ''),
        );
      }}
    />
  );
}
