import type { TSchema } from 'typebox';

/** A plain JSON Schema object, as MCP puts it on the wire. */
export type JsonSchemaObject = { type: 'object'; properties?: Record<string, object>; required?: string[]; [k: string]: unknown };

/**
 * A TypeBox schema as plain JSON Schema for MCP clients: TypeBox's symbol keys dropped (JSON
 * round trip) and `$id` removed everywhere, because the entity schemas carry ids for the OpenAPI
 * document and a client compiling several tools with one validator (the SDK's Ajv) refuses the
 * same `$id` twice.
 */
export function toJsonSchema(schema: TSchema): JsonSchemaObject {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.entries(v as Record<string, unknown>)
          .filter(([k]) => k !== '$id')
          .map(([k, x]) => [k, strip(x)]),
      );
    }
    return v;
  };
  const plain = strip(JSON.parse(JSON.stringify(schema))) as JsonSchemaObject;
  // An intersection of objects (allOf) is an object; MCP wants `type: "object"` said at the top.
  if (plain.type === undefined && Array.isArray(plain.allOf)) return { ...plain, type: 'object' };
  if (plain.type !== 'object') throw new TypeError('MCP input and output schemas must be objects');
  return plain;
}

/**
 * Every sub-schema of a JSON schema with its path (`$.a[].b`, `$.c|anyOf0`, `$.g{}`): nested objects'
 * properties, array items, anyOf/oneOf/allOf branches and additionalProperties objects. What the
 * tool-schema checks walk (a description on every input property, strict-mode rules at every depth).
 */
export function* subSchemas(schema: unknown, at = '$'): Generator<[string, Record<string, unknown>]> {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return;
  const s = schema as Record<string, unknown>;
  yield [at, s];
  for (const [k, v] of Object.entries((s.properties as object | undefined) ?? {})) yield* subSchemas(v, `${at}.${k}`);
  if (s.items) yield* subSchemas(s.items, `${at}[]`);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = s[key];
    if (Array.isArray(list)) for (const [i, v] of list.entries()) yield* subSchemas(v, `${at}|${key}${i}`);
  }
  if (s.additionalProperties && typeof s.additionalProperties === 'object') yield* subSchemas(s.additionalProperties, `${at}{}`);
}

/** Every property schema (an entry of some `properties`) at every depth, with its path. */
export function* propertiesAtEveryDepth(schema: unknown, at = '$'): Generator<[string, Record<string, unknown>]> {
  for (const [where, s] of subSchemas(schema, at)) {
    for (const [k, v] of Object.entries((s.properties as object | undefined) ?? {})) yield [`${where}.${k}`, v as Record<string, unknown>];
  }
}
