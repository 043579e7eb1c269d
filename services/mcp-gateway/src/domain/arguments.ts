import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { JsonSchemaObject } from '@flowdesk/contracts';

// ajv-formats is CommonJS: its default export arrives as the module object under some loaders.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

/** Where in the arguments: `name`, `graph.nodes[0].params.url`, or `arguments` for the whole object. */
export function fieldPath(segments: readonly (string | number)[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(s)) out += out ? `.${s}` : s;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out || 'arguments';
}

const pointerSegments = (pointer: string) =>
  pointer
    .split('/')
    .slice(1)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));

/** One Ajv error as a sentence that names the field (and the offending property or allowed values). */
function describe(e: ErrorObject): string {
  const at = pointerSegments(e.instancePath);
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties':
      return `${fieldPath([...at, String(p.additionalProperty)])} is not a known property${at.length ? ` of ${fieldPath(at)}` : ''}`;
    case 'required':
      return `${fieldPath([...at, String(p.missingProperty)])} is required`;
    case 'enum':
      return `${fieldPath(at)} must be one of: ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${fieldPath(at)} must be ${JSON.stringify(p.allowedValue)}`;
    case 'minProperties':
      return `${fieldPath(at)} must have at least ${String(p.limit)} propert${p.limit === 1 ? 'y' : 'ies'}`;
    default:
      return `${fieldPath(at)} ${e.message ?? 'is invalid'}`;
  }
}

/**
 * The messages of a failed validation, most useful first: for a union (anyOf) Ajv reports every
 * branch's complaint, so keep at most a few, without duplicates.
 */
export function describeErrors(errors: readonly ErrorObject[] | null | undefined): string {
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if') continue;
    seen.add(describe(e));
  }
  const list = [...seen];
  if (list.length === 0) return 'arguments are invalid';
  return list.length > 4 ? `${list.slice(0, 4).join('; ')}; and ${list.length - 4} more` : list.join('; ');
}

/**
 * Text no Flowdesk store can hold: U+0000 (Postgres text and jsonb refuse it) and a lone UTF-16
 * surrogate (not Unicode; Postgres refuses it too). Returns the first offending field, or undefined.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function unstorableText(value: unknown, at: (string | number)[] = []): string | undefined {
  const bad = (s: string) =>
    s.includes('\0') ? 'the NUL character (U+0000)' : LONE_SURROGATE.test(s) ? 'a lone UTF-16 surrogate (not valid Unicode)' : undefined;
  if (typeof value === 'string') {
    const why = bad(value);
    return why && `${fieldPath(at)} must not contain ${why}`;
  }
  if (value === null || typeof value !== 'object') return undefined;
  if (at.length > 64) return undefined; // validation refuses anything this deep anyway
  const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  for (const [k, v] of entries) {
    if (typeof k === 'string') {
      const why = bad(k);
      if (why) return `the property name ${JSON.stringify(k.replaceAll('\0', '\\u0000'))} in ${fieldPath(at)} must not contain ${why}`;
    }
    const found = unstorableText(v, [...at, k]);
    if (found) return found;
  }
  return undefined;
}

export type ArgumentsCheck = { valid: true } | { valid: false; message: string };

/** The input validators of a catalogue, compiled once; the messages name the field. */
export function argumentValidators(schemas: Iterable<[string, JsonSchemaObject]>): Map<string, (args: unknown) => ArgumentsCheck> {
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  const out = new Map<string, (args: unknown) => ArgumentsCheck>();
  for (const [name, schema] of schemas) {
    const validate: ValidateFunction = ajv.compile(schema);
    out.set(name, (args) => {
      const unstorable = unstorableText(args);
      if (unstorable) return { valid: false, message: unstorable };
      return validate(args) ? { valid: true } : { valid: false, message: describeErrors(validate.errors) };
    });
  }
  return out;
}
