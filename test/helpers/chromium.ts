import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium: browser tests never download one. */
const CHROMIUM = process.env.FLUKSIO_TEST_CHROMIUM ?? '/usr/bin/chromium';

/** Where screenshots of the pages go (gitignored). */
export const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

export interface TestBrowser {
  browser: Browser;
  /**
   * A page in a context of its own: closing the page closes the context and with it every
   * socket Chromium opened (it preconnects sockets that would otherwise hold a test
   * server's close() up until they time out).
   */
  newPage(): Promise<Page>;
  /** Saves a full-page screenshot as test-artifacts/<name>.png. */
  screenshot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Headless Chromium (Playwright gives it a fresh, temporary profile) with everything
 * that reaches out to Google's hosts switched off (this machine's network is closed:
 * each would be refused).
 */
export async function launchChromium(): Promise<TestBrowser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  await mkdir(ARTIFACTS, { recursive: true });
  return {
    browser,
    async newPage() {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      page.once('close', () => void context.close());
      return page;
    },
    async screenshot(page, name) {
      await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
    },
    async close() {
      await browser.close();
    },
  };
}
