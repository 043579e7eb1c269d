import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS; its default export arrives wrapped under some loaders.
const addFormats = ((addFormatsPlugin as unknown as { default?: typeof addFormatsPlugin }).default ?? addFormatsPlugin) as unknown as (ajv: Ajv) => void;

function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: false, allErrors: false, addUsedSchema: false, strict: false });
  addFormats(ajv);
  return ajv;
}

/**
 * Query strings and path parameters arrive as text, so they are coerced (`?limit=5` → 5, a single
 * `?status=x` → ['x']). JSON bodies are typed already and are NOT coerced: coercion would quietly
 * turn `null` into `""` or `"5"` into 5 and store something the client did not send.
 */
export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const compilers = { text: withCache(makeAjv('array')), json: withCache(makeAjv(false)) };
  return ({ schema, httpPart }) => (httpPart === 'body' ? compilers.json : compilers.text)(schema as object);
}

/** One TypeBox definition serves many routes: compile each schema object once per Ajv instance. */
function withCache(ajv: Ajv): (schema: object) => ValidateFunction {
  const cache = new WeakMap<object, ValidateFunction>();
  return (schema) => {
    let fn = cache.get(schema);
    if (!fn) cache.set(schema, (fn = ajv.compile(schema)));
    return fn;
  };
}
