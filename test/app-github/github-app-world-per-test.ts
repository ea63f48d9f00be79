import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import {
  closeGitHubAppDatabase,
  openGitHubAppDatabase,
  openGitHubAppWorld,
  type GitHubAppWorld,
} from './github-app-fixture.js';

/**
 * Gives each test of the file a fresh GitHubAppWorld: the file's database opened before its
 * first test and closed after its last; a world opened before each test and handed to
 * `opened`; after each test, the world `current` returns (a test may close its world and
 * open another with other settings) closed, and its GitHub double checked for requests
 * GitHub would have refused.
 */
export function gitHubAppWorldPerTest(world: {
  opened(world: GitHubAppWorld): void;
  current(): GitHubAppWorld;
}): void {
  beforeAll(openGitHubAppDatabase);
  afterAll(closeGitHubAppDatabase);
  beforeEach(async () => {
    world.opened(await openGitHubAppWorld());
  });
  afterEach(async () => {
    await world.current().close();
    expect(world.current().double.violations).toEqual([]);
  });
}
