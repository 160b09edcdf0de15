import t from 'tap';
import { TargetPolicy } from '../../../src/alerts/index.js';
import { DeliveryError } from '../../../src/alerts/errors.js';

t.test('internal ranges are refused, public addresses permitted', async (t) => {
  const p = new TargetPolicy([]);
  const refused = [
    '127.0.0.1', '127.255.0.9', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
    '224.0.0.1', '255.255.255.255', '198.18.0.1', '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:8.8.8.8', '64:ff9b::a00:1',
    // IPv4-compatible, local-use NAT64, site-local, 6to4 and Teredo (IPv4 addresses embedded).
    '::127.0.0.1', '::a00:1', '64:ff9b:1::a00:1', 'fec0::1', '2002:7f00:1::1', '2002:a9fe:a9fe::1', '2001:0:4136:e378::1',
  ];
  for (const a of refused) t.equal(p.permits(a), false, `${a} refused`);
  for (const a of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '100.128.0.1', '2606:4700::1111', '2001:4860:4860::8888']) t.equal(p.permits(a), true, `${a} permitted`);
});

t.test('allow_targets opens exactly the listed blocks', async (t) => {
  const p = new TargetPolicy(['127.0.0.1/32', '10.0.0.0/8', '::1']);
  t.equal(p.permits('127.0.0.1'), true);
  t.equal(p.permits('127.0.0.2'), false, 'not the rest of 127/8');
  t.equal(p.permits('10.200.3.4'), true);
  t.equal(p.permits('::1'), true);
  t.equal(p.permits('192.168.0.1'), false);
});

t.test('resolve: IP literals and names are checked; the refusal names the host and its addresses', async (t) => {
  const p = new TargetPolicy(['127.0.0.1/32']);
  t.equal(await p.resolve('127.0.0.1'), '127.0.0.1');
  const refuse = async (host: string, re: RegExp): Promise<void> => {
    try {
      await p.resolve(host);
      t.fail(`${host} should be refused`);
    } catch (err) {
      t.ok(err instanceof DeliveryError, host);
      t.equal((err as DeliveryError).code, 'E_TARGET_REFUSED');
      t.equal((err as DeliveryError).transient, false, 'not worth a retry');
      t.match((err as Error).message, re);
    }
  };
  await refuse('127.0.0.2', /refused to connect to "127\.0\.0\.2" \(127\.0\.0\.2\).*alerts\.allow_targets/);
  await refuse('[::1]', /refused to connect to "::1"/);
  await refuse('169.254.169.254', /169\.254\.169\.254/);
  const strict = new TargetPolicy([]);
  await t.rejects(strict.resolve('localhost'), { code: 'E_TARGET_REFUSED', message: /refused to connect to "localhost" \(127\.0\.0\.1, ::1\)/ }, 'a name resolving to loopback');
  await t.rejects(strict.resolve('app.localhost.'), { code: 'E_TARGET_REFUSED' }, '*.localhost is loopback too');
  await t.rejects(strict.resolve('no-such-host.invalid'), { code: 'E_ACTION_FAILED', message: /cannot resolve host "no-such-host\.invalid"/ });
});
