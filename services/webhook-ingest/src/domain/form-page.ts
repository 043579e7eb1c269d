import { createHash } from 'node:crypto';
import { DEFAULT_FORM_THANK_YOU, FORM_TRIGGER_LIMITS, type FormTriggerField, type FormTriggerConfig } from '@flowdesk/contracts';
import { HONEYPOT_FIELD, TOKEN_FIELD } from './form-token.ts';

/**
 * The hosted form's pages (docs/triggers.md, "Form"), rendered on the server: plain HTML with one
 * stylesheet and no script, readable at 390 px, each field with its label, its help and its error
 * tied to it (aria-describedby, aria-invalid), the first invalid field focused (autofocus). Every
 * text that comes from the form's definition or a submission goes through `escapeHtml`.
 */

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
/** Escaped, line breaks kept. */
const paragraphs = (s: string) => escapeHtml(s).replace(/\r?\n/g, '<br>');

const CSS = `
*{box-sizing:border-box}
html{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.5;color:#1b1f24;background:#f4f5f7}
body{margin:0;padding:1rem}
main{max-width:40rem;margin:0 auto;background:#fff;border:1px solid #d5d9de;border-radius:.5rem;padding:1.5rem}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 .5rem}
h2{font-size:1.05rem;margin:0 0 .25rem}
p{margin:0 0 1rem}
.desc{color:#3d4550}
.note{font-size:.875rem;color:#4d5560}
.field{margin:0 0 1.1rem}
label{display:block;font-weight:600;margin:0 0 .25rem}
.req{color:#b3261e}
.help{font-size:.875rem;color:#4d5560;margin:0 0 .3rem}
.error{font-size:.875rem;color:#b3261e;font-weight:600;margin:0 0 .3rem}
input,select,textarea{display:block;width:100%;max-width:100%;font:inherit;color:inherit;padding:.55rem .65rem;border:1px solid #7a828c;border-radius:.375rem;background:#fff}
textarea{min-height:7rem;resize:vertical}
input:focus,select:focus,textarea:focus,button:focus,a:focus{outline:3px solid #1d5fd1;outline-offset:2px}
[aria-invalid=true]{border:2px solid #b3261e}
button{font:inherit;font-weight:600;color:#fff;background:#1d5fd1;border:0;border-radius:.375rem;padding:.65rem 1.25rem;cursor:pointer}
button:hover{background:#174ba6}
.summary{border:2px solid #b3261e;border-radius:.375rem;padding:.75rem 1rem;margin:0 0 1.25rem}
.summary ul{margin:0;padding-left:1.25rem}
.summary p{margin:0}
.summary a{color:#8c1d18}
.hp{position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden}
a{color:#1d5fd1}
`.trim();

/** The page's Content-Security-Policy: no script at all, this stylesheet only, posts to itself (or the redirect's origin). */
const STYLE_HASH = `'sha256-${createHash('sha256').update(CSS).digest('base64')}'`;
export function formPageCsp(redirectUrl?: string): string {
  let to = '';
  if (redirectUrl) {
    try {
      to = ` ${new URL(redirectUrl).origin}`;
    } catch {
      to = '';
    }
  }
  // form-action covers the redirect after a submission too, so the redirect's origin is allowed.
  return `default-src 'none'; style-src ${STYLE_HASH}; form-action 'self'${to}; frame-ancestors 'none'; base-uri 'none'`;
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)}</title>
<style>${CSS}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

const idOf = (field: FormTriggerField) => `f-${escapeHtml(field.name)}`;

function fieldHtml(field: FormTriggerField, value: string, error: string | undefined, first: boolean): string {
  const id = idOf(field);
  const described = [field.help ? `${id}-help` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const common =
    `id="${id}" name="${escapeHtml(field.name)}"` +
    (field.required ? ' required' : '') +
    (error ? ' aria-invalid="true"' : '') +
    (described ? ` aria-describedby="${described}"` : '') +
    (error && first ? ' autofocus' : '');
  let control: string;
  switch (field.type) {
    case 'textarea':
      control = `<textarea ${common} rows="5" maxlength="${FORM_TRIGGER_LIMITS.textareaChars}">${escapeHtml(value)}</textarea>`;
      break;
    case 'select': {
      const options = (field.options ?? []).map((o) => `<option value="${escapeHtml(o)}"${o === value ? ' selected' : ''}>${escapeHtml(o)}</option>`).join('');
      control = `<select ${common}><option value="">Choose…</option>${options}</select>`;
      break;
    }
    default: {
      const type = field.type === 'number' ? 'number" step="any' : field.type;
      const auto = field.type === 'email' ? ' autocomplete="email"' : '';
      control = `<input ${common} type="${type}" value="${escapeHtml(value)}" maxlength="${FORM_TRIGGER_LIMITS.valueChars}"${auto}>`;
    }
  }
  return `<div class="field">
<label for="${id}">${escapeHtml(field.label)}${field.required ? ' <span class="req" aria-hidden="true">*</span>' : ''}</label>
${field.help ? `<p class="help" id="${id}-help">${escapeHtml(field.help)}</p>\n` : ''}${error ? `<p class="error" id="${id}-error">${escapeHtml(error)}</p>\n` : ''}${control}
</div>`;
}

/** The form: empty, or again with the values as sent and a message at each field that needs one. */
export function renderForm(
  form: FormTriggerConfig,
  options: { token: string; values?: Record<string, string>; errors?: Record<string, string>; notice?: string },
): string {
  const values = options.values ?? {};
  const errors = options.errors ?? {};
  const invalid = form.fields.filter((f) => errors[f.name]);
  const summary = invalid.length
    ? `<div class="summary" role="alert">
<h2>${invalid.length === 1 ? 'One field needs' : `${invalid.length} fields need`} your attention</h2>
<ul>${invalid.map((f) => `<li><a href="#${idOf(f)}">${escapeHtml(f.label)}: ${escapeHtml(errors[f.name]!)}</a></li>`).join('')}</ul>
</div>
`
    : '';
  const notice = options.notice
    ? `<div class="summary" role="alert"><p>${escapeHtml(options.notice)}</p></div>
`
    : '';
  const anyRequired = form.fields.some((f) => f.required);
  const fields = form.fields.map((f) => fieldHtml(f, values[f.name] ?? '', errors[f.name], f === invalid[0])).join('\n');
  return page(
    invalid.length ? `Check the form: ${form.title}` : form.title,
    `<h1>${escapeHtml(form.title)}</h1>
${form.description ? `<p class="desc">${paragraphs(form.description)}</p>\n` : ''}${summary}${notice}${anyRequired ? '<p class="note">Fields marked <span class="req">*</span> are required.</p>\n' : ''}<form method="post">
${fields}
<div class="hp" aria-hidden="true"><label for="f-${HONEYPOT_FIELD}">Leave this field empty</label><input id="f-${HONEYPOT_FIELD}" name="${HONEYPOT_FIELD}" type="text" tabindex="-1" autocomplete="off"></div>
<input type="hidden" name="${TOKEN_FIELD}" value="${escapeHtml(options.token)}">
<button type="submit">${escapeHtml(form.submitLabel ?? 'Submit')}</button>
</form>`,
  );
}

export function renderThankYou(form: Pick<FormTriggerConfig, 'title' | 'thankYou'>): string {
  return page(form.title, `<h1>${escapeHtml(form.title)}</h1>\n<p role="status">${paragraphs(form.thankYou || DEFAULT_FORM_THANK_YOU)}</p>`);
}

/** A page for a refusal: not found, expired, too many submissions, too large, unavailable. */
export function renderMessage(heading: string, message: string, link?: { href: string; text: string }): string {
  return page(
    heading,
    `<h1>${escapeHtml(heading)}</h1>\n<p>${escapeHtml(message)}</p>${link ? `\n<p><a href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a></p>` : ''}`,
  );
}
