import { describe, expect, it } from 'vitest';
import { MASK, collectSecrets, isSecretName, maskArgs, maskedSecretPaths, maskEnv, maskFreeText, maskText, nameParts } from '../../main/engine/mask.js';
import { LogMasker } from '../../main/engine/mask-stream.js';

describe('isSecretName', () => {
  it.each([
    'password', '--password', 'PASSWORD', 'pass', 'db-pass', 'passwd', 'passphrase',
    'secret', 'client-secret', 'clientSecret', 'CLIENT_SECRET', 'clientsecret',
    'token', 'API_TOKEN', 'accessToken', 'access_token', 'GITHUB_TOKEN', 'authtoken',
    'key', 'KEY', 'api-key', 'api_key', 'apiKey', 'APIKey', 'apikey', 'x-api-key', 'AWS_SECRET_ACCESS_KEY', 'private-key',
    'credential', 'credentials', 'GOOGLE_APPLICATION_CREDENTIALS', 'creds',
  ])('%s is secret', (name) => {
    expect(isSecretName(name)).toBe(true);
  });

  it.each([
    'keyboard', '--keyboard', 'monkey', 'MONKEY_ID', 'turnkey', 'bypass', 'compass', 'passes', 'passenger',
    'tokenizer', 'max-tokens', 'sort-keys', 'keyring', 'secretary', 'PWD', 'path', 'user', 'verbose', '',
  ])('%s is not secret', (name) => {
    expect(isSecretName(name)).toBe(false);
  });

  it('splits names into lower-case word parts at separators and camelCase', () => {
    expect(nameParts('--clientSecret')).toEqual(['client', 'secret']);
    expect(nameParts('APIKey')).toEqual(['api', 'key']);
    expect(nameParts('AWS_SECRET_ACCESS_KEY')).toEqual(['aws', 'secret', 'access', 'key']);
    expect(nameParts('oauth2Token')).toEqual(['oauth2', 'token']);
  });
});

describe('maskArgs', () => {
  it('masks the value of --name=value, -name=value and name=value with a secret name', () => {
    expect(maskArgs(['--password=hunter2', '-api-key=abc', 'API_TOKEN=t0k', '--client-secret=s=with=equals'])).toEqual([
      '--password=***',
      '-api-key=***',
      'API_TOKEN=***',
      '--client-secret=***',
    ]);
  });

  it('masks the separate value after a secret flag and keeps everything else', () => {
    expect(maskArgs(['run', '--user', 'ann', '--password', 'hunter2', '-token', 'xyz', '--verbose', 'file.txt'])).toEqual([
      'run', '--user', 'ann', '--password', MASK, '-token', MASK, '--verbose', 'file.txt',
    ]);
  });

  it('masks a value even when it starts with a single dash', () => {
    expect(maskArgs(['--api-key', '-dash-start'])).toEqual(['--api-key', MASK]);
  });

  it('treats a secret flag followed by a long option as a switch', () => {
    expect(maskArgs(['--token', '--verbose', 'x'])).toEqual(['--token', '--verbose', 'x']);
  });

  it('never masks the argument after a negated switch', () => {
    expect(maskArgs(['--no-password', 'input.csv'])).toEqual(['--no-password', 'input.csv']);
  });

  it('leaves a secret flag at the end alone', () => {
    expect(maskArgs(['--password'])).toEqual(['--password']);
  });

  it('does not mask look-alike names', () => {
    const args = ['--keyboard', 'us', '--monkey=1', '--max-tokens', '100', '--sort-keys', 'a.json', 'bypass=yes'];
    expect(maskArgs(args)).toEqual(args);
  });

  it('masks the value once: the masked value is not read as a flag', () => {
    expect(maskArgs(['--secret', '--', 'x'])).toEqual(['--secret', '--', 'x']);
    expect(maskArgs(['--secret', '-password', 'x'])).toEqual(['--secret', MASK, 'x']);
  });

  it('masks passwords in URLs and secret query parameters anywhere', () => {
    expect(maskArgs(['postgres://app:s3cr@t@db.local:5432/x', '--url=https://h/api?user=ann&token=abc&x=1', 'redis://:pw@r/0'])).toEqual([
      'postgres://app:***@db.local:5432/x',
      '--url=https://h/api?user=ann&token=***&x=1',
      'redis://:***@r/0',
    ]);
  });

  it('masks secret HTTP header arguments', () => {
    expect(maskArgs(['-H', 'Authorization: Bearer abc.def', '-H', 'X-Api-Key:k1', '-H', 'Accept: text/plain'])).toEqual([
      '-H', 'Authorization: ***', '-H', 'X-Api-Key:***', '-H', 'Accept: text/plain',
    ]);
  });

  it('does not modify its input and is idempotent', () => {
    const args = ['--password', 'p', 'TOKEN=t'];
    const once = maskArgs(args);
    expect(args).toEqual(['--password', 'p', 'TOKEN=t']);
    expect(maskArgs(once)).toEqual(once);
  });
});

describe('maskEnv', () => {
  it('masks values whose names look secret and URL passwords in the others', () => {
    expect(
      maskEnv({ API_TOKEN: 't', DB_PASSWORD: 'p', HOME: '/home/ann', PWD: '/tmp', KEYBOARD: 'us', DATABASE_URL: 'postgres://u:pw@h/db' }),
    ).toEqual({ API_TOKEN: MASK, DB_PASSWORD: MASK, HOME: '/home/ann', PWD: '/tmp', KEYBOARD: 'us', DATABASE_URL: 'postgres://u:***@h/db' });
  });
});

describe('maskText', () => {
  it('replaces every occurrence of every secret', () => {
    expect(maskText('login hunter2 ok; again hunter2; tok=abc123', ['hunter2', 'abc123'])).toBe('login *** ok; again ***; tok=***');
  });

  it('masks a secret that contains another one whole (longest first)', () => {
    expect(maskText('key=abcdef', ['abc', 'abcdef'])).toBe('key=***');
  });

  it('treats secrets literally, not as patterns', () => {
    expect(maskText('a.c abc (x+) x', ['a.c', '(x+)'])).toBe('*** abc *** x');
  });

  it('ignores empty secrets and returns the text unchanged without any', () => {
    expect(maskText('nothing here', ['', ''])).toBe('nothing here');
    expect(maskText('nothing here', [])).toBe('nothing here');
  });
});

describe('collectSecrets', () => {
  it('collects what maskArgs and maskEnv hide, skipping trivial values', () => {
    expect(
      collectSecrets(['--password', 'hunter2', 'TOKEN=t0k3n', '--api-key=1', '--secret', 'true', 'https://u:urlpass@h/'], {
        CLIENT_SECRET: 'cs-value',
        HOME: '/home/ann',
      }).sort(),
    ).toEqual(['cs-value', 'hunter2', 't0k3n', 'urlpass'].sort());
  });

  it('feeds maskText so a logged secret is hidden', () => {
    const secrets = collectSecrets(['--password', 'hunter2']);
    expect(maskText('connecting with hunter2', secrets)).toBe('connecting with ***');
  });
});

describe('free text, masked followed logs, masked placeholders', () => {
  it('maskFreeText applies the argument rules word by word, and labels in prose', () => {
    expect(maskFreeText('login password=hunter2 ok')).toBe('login password=*** ok');
    expect(maskFreeText('retry  --api-key abcd1234\nnext')).toBe('retry  --api-key ***\nnext');
    expect(maskFreeText('Password: hunter2, Authorization: Bearer xyz123 done')).toBe('Password: *** Authorization: Bearer *** done');
    expect(maskFreeText('keyboard: fine, 3 passes')).toBe('keyboard: fine, 3 passes');
    expect(maskFreeText('echoed s3cr3tvalue here', ['s3cr3tvalue'])).toBe('echoed *** here');
  });

  it('LogMasker never lets a secret through when it arrives split across reads', () => {
    const secret = 'hunter2secret';
    const text = `a ${secret} b ${secret}${secret} c ${secret}`;
    for (let size = 1; size <= text.length; size++) {
      const m = new LogMasker([secret, 'hunter']);
      let shown = '';
      for (let i = 0; i < text.length; i += size) {
        const part = m.push(text.slice(i, i + size));
        expect(part).not.toContain('hunter');
        shown += part;
      }
      shown += m.end();
      expect(shown, `reads of ${size}`).toBe('a *** b ****** c ***');
    }
  });

  it('maskedSecretPaths finds the *** export left where secrets were, and only there', () => {
    expect(maskedSecretPaths(['--password=***', '--api-key', '***', '--glob=***', 'https://u:***@h/?token=***'], { TOKEN: '***', NOTE: '***' })).toEqual(['args.0', 'args.2', 'args.4', 'env.TOKEN']);
    expect(maskedSecretPaths(['--password=real'], { TOKEN: 'real' })).toEqual([]);
  });
});
