/**
 * `text`, a URL as the user gave it, without the user name and password it may carry
 * (`https://user:pass@host` → `https://host/`): what the job's log, the step summary or an
 * error message shows, since anyone who may read the workflow run may read those. Text
 * that is not a URL with a host (`user:pass@host`) loses whatever precedes its last `@`.
 */
export function urlWithoutUserinfo(text: string): string {
  try {
    const url = new URL(text);
    if (url.host !== '') {
      if (url.username === '' && url.password === '') return text;
      url.username = '';
      url.password = '';
      return url.href;
    }
  } catch {
    // Not a URL: cut it by hand below.
  }
  return text.replace(/^([a-z][a-z\d+.-]*:\/\/)?.*@/is, '$1');
}
