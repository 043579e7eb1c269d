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
