/**
 * The login + consent page: plain server-rendered HTML, one form, no JavaScript. Every value that
 * comes from a client (its self-asserted name, the redirect host) is HTML-escaped.
 */

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Framing refused (clickjacking a consent button), nothing loaded from elsewhere, no referrer leaking the query. */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  // Images: https only (a client's logo from its metadata document; never http, so no mixed content, never data:).
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src https:; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
} as const;

const STYLE = `
  body { font: 16px/1.5 system-ui, sans-serif; background: #f4f5f7; color: #1d2330; margin: 0; }
  main { max-width: 28rem; margin: 3rem auto; background: #fff; padding: 2rem; border-radius: 10px; box-shadow: 0 1px 4px #0002; }
  h1 { font-size: 1.4rem; margin: 0 0 .5rem; }
  fieldset { border: 1px solid #d5d8de; border-radius: 8px; margin: 1.25rem 0; padding: .75rem 1rem 1rem; }
  legend { font-weight: 600; padding: 0 .25rem; }
  label { display: block; }
  input[type=email], input[type=password] { display: block; width: 100%; box-sizing: border-box; padding: .5rem; margin: .25rem 0 .75rem; font: inherit; border: 1px solid #aab0bb; border-radius: 6px; }
  .scope { display: flex; gap: .6rem; align-items: flex-start; margin: .5rem 0; }
  .scope input { margin-top: .35rem; }
  .hint { color: #555d6b; font-size: .9rem; }
  .error { background: #fdecec; color: #8a1c1c; border: 1px solid #f2b8b8; padding: .6rem .8rem; border-radius: 6px; }
  .buttons { display: flex; gap: .75rem; }
  button { font: inherit; padding: .55rem 1.2rem; border-radius: 6px; border: 1px solid #1f4fd1; cursor: pointer; }
  button[value=approve] { background: #1f4fd1; color: #fff; }
  button[value=deny] { background: #fff; color: #1f4fd1; }
  .who { background: #eef2fd; border: 1px solid #c9d5f6; padding: .6rem .8rem; border-radius: 6px; }
  a { color: #1f4fd1; }
  .client { display: flex; gap: .9rem; align-items: center; margin-bottom: .5rem; }
  .logo { position: relative; flex: none; width: 48px; height: 48px; border-radius: 10px; background: #dfe5f3; color: #1f4fd1; font: 600 1.5rem/48px system-ui, sans-serif; text-align: center; overflow: hidden; }
  .logo img { position: absolute; inset: 0; width: 48px; height: 48px; object-fit: contain; background: #fff; }
  .origin { background: #fff8e6; border: 1px solid #f0d48a; padding: .6rem .8rem; border-radius: 6px; }
  .origin strong { font-size: 1.1rem; }
  :focus-visible { outline: 3px solid #f0a500; outline-offset: 2px; }
`;

const layout = (title: string, body: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;

const SCOPE_TEXT: Record<string, { label: string; hint: string }> = {
  'mcp:read': { label: 'Read your workspace', hint: 'mcp:read — see projects, tasks, calendar and workflows.' },
  'mcp:write': { label: 'Change your workspace', hint: 'mcp:write — create, update and delete on your behalf. Includes read.' },
};

export interface ConsentView {
  /** The client: its name as it asserts it; for one identified by a metadata document also that URL and its https logo. */
  client: { name: string; metadataUrl?: string; logoUri?: string | null };
  redirectUri: string;
  /** The scopes asked, normalised: one checkbox each. */
  scope: string;
  csrfToken: string;
  email?: string;
  error?: string;
  /** The console session's user: the page then only asks Approve / Deny, no password. */
  signedIn?: { userId: string; email: string; name: string };
}

/** Where the user will be sent back: the host for web clients, the scheme for apps. */
function destination(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.host ? url.host : `${url.protocol}…`;
}

const loginFields = (email: string | undefined) => `<fieldset>
<legend>Sign in to Flowdesk</legend>
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(email ?? '')}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
</fieldset>`;

/** Signed in to the console already: who approves, and the way out if that is the wrong person. */
const signedInAs = (u: { userId: string; email: string; name: string }) => `<input type="hidden" name="signed_in_user" value="${escapeHtml(u.userId)}">
<p class="who" id="signed-in-as">Signed in as <strong>${escapeHtml(u.name || u.email)}</strong>${u.name ? ` (${escapeHtml(u.email)})` : ''}. Not you? <a href="/">Sign out</a> in Flowdesk, then connect again.</p>`;

/**
 * Who the client is: the logo (https only, no referrer; the initial shows when there is none or it
 * does not load, since an image with an empty alt renders nothing) and, for a client identified by a
 * metadata document, that document's host — the one thing a look-alike name cannot fake.
 */
function clientHeader(client: ConsentView['client']): string {
  const initial = escapeHtml(Array.from(client.name.trim())[0]?.toUpperCase() ?? '?');
  const logo = client.logoUri
    ? `<img src="${escapeHtml(client.logoUri)}" alt="" width="48" height="48" referrerpolicy="no-referrer" loading="eager" decoding="async">`
    : '';
  const name = escapeHtml(client.name);
  const header = `<div class="client"><span class="logo" aria-hidden="true" id="client-logo">${initial}${logo}</span>
<h1>Connect <span id="client-name">${name}</span> to Flowdesk</h1></div>`;
  if (!client.metadataUrl) return header;
  const host = escapeHtml(new URL(client.metadataUrl).host);
  return `${header}
<p class="origin" id="client-host">Published by <strong>${host}</strong><br><span class="hint">The name and logo above come from ${escapeHtml(client.metadataUrl)}. Continue only if you expect an application from ${host}.</span></p>`;
}

export function renderConsentPage(v: ConsentView): string {
  const name = escapeHtml(v.client.name);
  const boxes = v.scope
    .split(' ')
    .map((s) => {
      const text = SCOPE_TEXT[s]!;
      const id = `scope-${s.replace(':', '-')}`;
      return `<div class="scope"><input type="checkbox" id="${id}" name="scope" value="${s}" checked aria-describedby="${id}-hint"><label for="${id}">${escapeHtml(text.label)}<br><span class="hint" id="${id}-hint">${escapeHtml(text.hint)}</span></label></div>`;
    })
    .join('\n');
  return layout(
    `Connect ${v.client.name} to Flowdesk`,
    `${clientHeader(v.client)}
<p><strong>${name}</strong> wants access to your Flowdesk workspace. You will then return to <strong>${escapeHtml(destination(v.redirectUri))}</strong>.</p>
${v.error ? `<p class="error" role="alert">${escapeHtml(v.error)}</p>` : ''}
<form method="post" action="/oauth/authorize">
<input type="hidden" name="csrf_token" value="${escapeHtml(v.csrfToken)}">
${v.signedIn ? signedInAs(v.signedIn) : loginFields(v.email)}
<fieldset>
<legend>Permissions ${name} asks for</legend>
${boxes}
</fieldset>
<div class="buttons">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
</div>
</form>`,
  );
}

export function renderErrorPage(message: string): string {
  return layout('Cannot connect to Flowdesk', `<h1>Cannot connect to Flowdesk</h1>\n<p class="error" role="alert">${escapeHtml(message)}</p>`);
}
