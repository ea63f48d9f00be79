/** Which page the browser bundle draws into a shell (pages/main.ts reads it). */
export type PageKind = 'run' | 'sweep' | 'compare' | 'runs';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made safe for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}

/**
 * The HTML of a page: a title, the styles and the bundle, and the page kind and subject
 * for the bundle to fetch and draw. Everything else is drawn by the browser from the
 * page's JSON, so a running run's page keeps up without a reload. A signed-in `viewer` is
 * named in the header, beside a sign-out button.
 */
export function pageShell({
  kind,
  subject,
  title,
  viewer = null,
}: {
  kind: PageKind;
  subject: string;
  title: string;
  viewer?: string | null | undefined;
}): string {
  const account =
    viewer === null
      ? ''
      : `<form class="account" method="post" action="/auth/signout"><span>Signed in as <strong>${escapeHtml(viewer)}</strong></span> <button type="submit">Sign out</button></form>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · fluksio</title>
<link rel="stylesheet" href="/pages/assets/pages.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><a href="#main" class="brand" aria-label="fluksio">fluksio</a>${account}</header>
<main id="main" tabindex="-1" data-page="${kind}" data-subject="${escapeHtml(subject)}"><p class="loading">Loading…</p></main>
<script src="/pages/assets/pages.js" defer></script>
</body>
</html>
`;
}

/** A plain page for a refusal (403, 404), saying what the reader can do. */
export function messagePage(title: string, message: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · fluksio</title>
<link rel="stylesheet" href="/pages/assets/pages.css"></head>
<body><main id="main"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></main></body></html>
`;
}
