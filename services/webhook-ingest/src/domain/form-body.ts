/**
 * HTML form bodies for the webhook (docs/webhooks.md, "Form posts"): `application/x-www-form-urlencoded`
 * and `multipart/form-data` become the trigger data as `{ field: value }` (a repeated name: an array of
 * its values, in order). A multipart file is kept as `{ filename, contentType, size, contentBase64 }`
 * within the limits below; beyond them the delivery is refused with 413 naming the limit, never cut
 * silently. Parsed with well-kept libraries: fast-querystring (fastify's own query parser) and
 * @fastify/busboy (fastify's multipart parser), over the bytes the route already read under its 1 MiB
 * body limit, so a signature can still be checked over the raw body.
 */
import { Readable } from 'node:stream';
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import { parse as parseQuery } from 'fast-querystring';
import { HttpError } from '@flowdesk/contracts';

export const FORM_LIMITS = {
  /** Fields (and files) in one form. */
  fields: 1_000,
  /** Files in one multipart form. */
  files: 10,
  /** One file's bytes; its content is kept, base64, in the trigger data. */
  fileBytes: 256 * 1024,
  /** A field name's and a value's characters. */
  nameChars: 200,
  valueChars: 100_000,
} as const;

export interface FormFile {
  filename: string;
  contentType: string;
  size: number;
  contentBase64: string;
}

const tooLarge = (what: string) => new HttpError('payload_too_large', what);

function add(out: Record<string, unknown>, name: string, value: unknown, count: { n: number }): void {
  if (++count.n > FORM_LIMITS.fields) throw tooLarge(`The form has more than ${FORM_LIMITS.fields} fields`);
  if (name.length > FORM_LIMITS.nameChars) throw tooLarge(`A field name is longer than ${FORM_LIMITS.nameChars} characters`);
  if (typeof value === 'string' && value.length > FORM_LIMITS.valueChars)
    throw tooLarge(`The field "${name.slice(0, 100)}" is longer than ${FORM_LIMITS.valueChars} characters`);
  // As for JSON bodies (payload-rules.ts): a run could never be recorded with it, and here it would set the object's prototype.
  if (name === '__proto__') throw new HttpError('bad_request', 'The form must not contain a field named "__proto__"');
  if (!Object.hasOwn(out, name)) out[name] = value;
  else if (Array.isArray(out[name])) (out[name] as unknown[]).push(value);
  else out[name] = [out[name], value];
}

/** `a=1&b=x+y&a=2` → `{ a: ['1', '2'], b: 'x y' }`. */
export function urlencodedFields(body: Buffer): Record<string, unknown> {
  const parsed = parseQuery(body.toString('utf8')) as Record<string, string | string[]>;
  const out: Record<string, unknown> = {};
  const count = { n: 0 };
  for (const name of Object.keys(parsed)) {
    const v = parsed[name]!;
    for (const value of Array.isArray(v) ? v : [v]) add(out, name, value, count);
  }
  return out;
}

/** The fields and files of a multipart/form-data body (`contentType` carries its boundary). */
export function multipartFields(body: Buffer, contentType: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const out: Record<string, unknown> = {};
    const count = { n: 0 };
    let failed: Error | undefined;
    const fail = (err: Error) => {
      failed ??= err;
    };
    let parser: BusboyInstance;
    try {
      parser = new Busboy({
        headers: { 'content-type': contentType },
        limits: {
          fields: FORM_LIMITS.fields,
          files: FORM_LIMITS.files,
          fileSize: FORM_LIMITS.fileBytes,
          fieldNameSize: FORM_LIMITS.nameChars,
          fieldSize: FORM_LIMITS.valueChars,
          parts: FORM_LIMITS.fields + FORM_LIMITS.files,
        },
      });
    } catch (err) {
      reject(new HttpError('bad_request', `Body is not multipart/form-data: ${(err as Error).message}`));
      return;
    }
    const pending: Promise<void>[] = [];
    parser.on('field', (name, value, nameTruncated, valueTruncated) => {
      if (nameTruncated) return fail(tooLarge(`A field name is longer than ${FORM_LIMITS.nameChars} characters`));
      if (valueTruncated) return fail(tooLarge(`The field "${name.slice(0, 100)}" is longer than ${FORM_LIMITS.valueChars} characters`));
      try {
        add(out, name, value, count);
      } catch (err) {
        fail(err as Error);
      }
    });
    parser.on('file', (name, stream, filename, _encoding, mimeType) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => fail(tooLarge(`The file "${filename.slice(0, 100)}" is larger than ${FORM_LIMITS.fileBytes / 1024} KiB`)));
      pending.push(
        new Promise<void>((done) =>
          stream.on('end', () => {
            const content = Buffer.concat(chunks);
            try {
              add(out, name, { filename, contentType: mimeType, size: content.length, contentBase64: content.toString('base64') } satisfies FormFile, count);
            } catch (err) {
              fail(err as Error);
            }
            done();
          }),
        ),
      );
    });
    parser.on('filesLimit', () => fail(tooLarge(`The form has more than ${FORM_LIMITS.files} files`)));
    parser.on('fieldsLimit', () => fail(tooLarge(`The form has more than ${FORM_LIMITS.fields} fields`)));
    parser.on('partsLimit', () => fail(tooLarge(`The form has more than ${FORM_LIMITS.fields + FORM_LIMITS.files} parts`)));
    // A malformed body ends in an error, not in finish.
    parser.on('error', (err: Error) => reject(failed ?? new HttpError('bad_request', `Body is not valid multipart/form-data: ${err.message}`)));
    parser.on('finish', () => {
      void Promise.all(pending).then(() => (failed ? reject(failed) : resolve(out)));
    });
    Readable.from([body]).pipe(parser);
  });
}
