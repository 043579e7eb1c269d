import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent } from 'react';

/** A small history router: the console has a handful of pages and no nested data loading. */
const listeners = new Set<() => void>();
const notify = () => listeners.forEach((l) => l());

/**
 * A page with unsaved changes (the workflow editor) blocks leaving it: the blocker returns false to
 * stay. Back/forward cannot be cancelled, so a refused popstate puts the page's URL back.
 */
let blocker: (() => boolean) | null = null;
let here = typeof window !== 'undefined' ? window.location.pathname + window.location.search : '/';
export function setNavigationBlocker(fn: (() => boolean) | null): void {
  blocker = fn;
}
if (typeof window !== 'undefined')
  window.addEventListener('popstate', () => {
    if (blocker && !blocker()) {
      window.history.pushState(null, '', here);
      return;
    }
    here = window.location.pathname + window.location.search;
    notify();
  });

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (blocker && !blocker()) return;
  here = to;
  if (opts.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  notify();
  window.scrollTo(0, 0);
}

export function usePath(): string {
  const [path, setPath] = useState(() => window.location.pathname);
  useEffect(() => {
    const update = () => setPath(window.location.pathname);
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return path;
}

/** Click handler for in-app links: plain clicks navigate in place, modified clicks open tabs as usual. */
export function onLinkClick(to: string) {
  return (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
}

/**
 * A table row that opens `to` when clicked anywhere (the Runs list). The row keeps a real link
 * (its status badge) for the keyboard and screen readers; this serves the mouse. A click on a link
 * or control inside the row does its own thing; a click that ends a text selection does nothing;
 * Ctrl/⌘-click opens a new tab, as a link would.
 */
export function openRowOnClick(to: string) {
  return (e: MouseEvent) => {
    const target = e.target as { closest?: (selector: string) => unknown } | null;
    if (e.defaultPrevented || e.button !== 0 || target?.closest?.('a, button, input, select, textarea, [role="button"]')) return;
    if (typeof window !== 'undefined' && String(window.getSelection?.() ?? '') !== '') return;
    if (e.metaKey || e.ctrlKey) {
      window.open(to, '_blank', 'noopener');
      return;
    }
    navigate(to);
  };
}

export function Link({ to, ...rest }: AnchorHTMLAttributes<HTMLAnchorElement> & { to: string }) {
  return <a href={to} onClick={onLinkClick(to)} {...rest} />;
}
