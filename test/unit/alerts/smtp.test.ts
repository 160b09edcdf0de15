/**
 * SmtpMailer against a real SMTP server (smtp-server on 127.0.0.1) that offers neither STARTTLS nor
 * AUTH: without credentials the mail goes out; with credentials and without implicit TLS, STARTTLS
 * is required, so the password is never sent in the clear, and the failure is permanent.
 */
import t from 'tap';
import { SmtpMailer } from '../../../src/alerts/index.js';
import { DeliveryError } from '../../../src/alerts/errors.js';
import { startSmtpReceiver } from '../../helpers/smtp-receiver.js';

const rx = await startSmtpReceiver(t);
const settings = { host: '127.0.0.1', port: rx.port, secure: false, username: '', password: '', sender: 'alerts@logsvc.test', timeoutMs: 5000 };
const msg = { to: ['ops@example.com'], subject: 'hello', text: 'body' };

t.test('without credentials the mail is sent over the plain connection', async (t) => {
  await new SmtpMailer(settings).send(msg, AbortSignal.timeout(10_000));
  t.equal((await rx.waitFor(1))[0]!.subject, 'hello');
});

t.test('with credentials, a server without STARTTLS gets no mail and no password', async (t) => {
  const before = rx.mails.length;
  const err = await new SmtpMailer({ ...settings, username: 'alerts', password: 'secret' }).send(msg, AbortSignal.timeout(10_000)).catch((e: unknown) => e);
  t.ok(err instanceof DeliveryError, String(err));
  t.equal((err as DeliveryError).transient, false, 'not retried');
  t.match((err as DeliveryError).message, /did not start TLS .*credentials are only sent over TLS/);
  t.equal(rx.mails.length, before);
});
