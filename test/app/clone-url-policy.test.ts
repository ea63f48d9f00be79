import { describe, expect, test } from 'vitest';
import { checkCloneUrl } from '../../app/clone-url-policy.js';

const policy = { cloneHosts: ['github.com', 'git.example.com', 'gitea.local:3000'], allowFileUrls: true };

describe('checkCloneUrl', () => {
  test.each([
    ['https://github.com/acme/model.git', 'acme/model'],
    ['https://github.com/acme/model', 'acme/model'],
    ['https://GitHub.com/acme/model/', 'acme/model'],
    ['https://git.example.com/ml/vision/model.git', 'git.example.com/ml/vision/model'],
    ['https://gitea.local:3000/ml/model.git', 'gitea.local_3000/ml/model'],
    ['file:///srv/repos/model.git', 'local/srv/repos/model.git'],
    ['file:///tmp/fluksio-repo-x1/', 'local/tmp/fluksio-repo-x1'],
  ])('%s names %s', (url, repository) => {
    expect(checkCloneUrl(url, policy)).toMatchObject({ repository });
  });

  test.each([
    ['ext::sh -c touch% /tmp/pwned', /remote-helper/],
    ['ext::sh', /remote-helper/],
    ['fd::17', /remote-helper/],
    ['--upload-pack=touch /tmp/pwned', /must not start with "-"/],
    ['-c', /must not start with "-"/],
    [
      'https://evil.example/acme/model.git',
      /"evil.example", which is not on this control plane's allow-list/,
    ],
    ['https://github.com.evil.example/acme/model.git', /not on this control plane's allow-list/],
    ['https://gitea.local/ml/model.git', /not on this control plane's allow-list/],
    ['https://x-access-token:ghs_secret@github.com/acme/model.git', /credentials/],
    ['https://user@github.com/acme/model.git', /credentials/],
    ['http://github.com/acme/model.git', /scheme "http"/],
    ['ssh://github.com/acme/model.git', /scheme "ssh"/],
    ['git@github.com:acme/model.git', /not a URL/],
    ['https://github.com/acme/model.git#main', /fragment/],
    ['https://github.com/acme', /github.com\/<owner>\/<name>/],
    ['https://github.com/acme/model/tree/main', /github.com\/<owner>\/<name>/],
    ['file://server/share/model', /file:\/\/\/path/],
    ['https://github.com/acme/model\n.git', /control characters/],
  ])('%s is refused', (url, message) => {
    const result = checkCloneUrl(url, policy);
    expect(result).toEqual({ problem: expect.stringMatching(message) });
    expect(JSON.stringify(result)).not.toContain('ghs_secret');
  });

  test('file:// only when allowed', () => {
    expect(checkCloneUrl('file:///srv/model', { ...policy, allowFileUrls: false })).toEqual({
      problem: expect.stringMatching(/FLUKSIO_ALLOW_FILE_URLS/),
    });
  });

  test('the URL handed to git is the normalized one', () => {
    expect(checkCloneUrl('https://github.com/acme/x/../model.git', policy)).toEqual({
      cloneUrl: 'https://github.com/acme/model.git',
      repository: 'acme/model',
    });
  });
});
