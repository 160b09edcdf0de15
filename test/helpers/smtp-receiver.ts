/**
 * A tiny SMTP receiver for email-action tests (smtp-server on 127.0.0.1, port 0): accepts every
 * mail without authentication or TLS and records the envelope and the raw message, with the
 * subject and the (quoted-printable decoded) text part picked out. Closed in the teardown.
 */
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import type { Teardown } from './node-process.js';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  subject: string;
  /** The message body after the headers, quoted-printable soft breaks and escapes decoded. */
  body: string;
}

export interface SmtpReceiver {
  port: number;
  mails: ReceivedMail[];
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedMail[]>;
}

function decodeQuotedPrintable(s: string): string {
  return s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

export async function startSmtpReceiver(t: Teardown): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const split = raw.indexOf('\r\n\r\n');
        const headers = raw.slice(0, split);
        const subject = /^Subject: (.*(?:\r\n[ \t].*)*)/m.exec(headers)?.[1]?.replace(/\r\n[ \t]/g, ' ') ?? '';
        const qp = /Content-Transfer-Encoding: quoted-printable/i.test(headers);
        const bodyRaw = raw.slice(split + 4);
        mails.push({
          from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          subject,
          body: (qp ? decodeQuotedPrintable(bodyRaw) : bodyRaw).replace(/\r\n/g, '\n'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
  return {
    port,
    mails,
    async waitFor(n, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (mails.length < n) {
        if (Date.now() > deadline) throw new Error(`smtp receiver: ${mails.length} of ${n} mails within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return mails;
    },
  };
}
