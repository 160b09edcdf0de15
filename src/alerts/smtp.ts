/**
 * Sending mail for email actions, and the home of nodemailer. One SMTP connection per message
 * (alerts are rare; a pool would hold idle connections to the server), every phase bounded by the
 * action timeout. SMTP 4xx replies and connection failures are worth a retry; 5xx replies are not.
 * With credentials and without implicit TLS, STARTTLS is required (never opportunistic): a server
 * or a man in the middle that does not offer it cannot make the password go out in the clear.
 */
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { DeliveryError, permanent, transient } from './errors.js';

export interface SmtpSettings {
  host: string;
  port: number;
  secure: boolean;
  username: string;
  password: string;
  sender: string;
  timeoutMs: number;
}

export interface MailMessage {
  to: string[];
  subject: string;
  text?: string | undefined;
  html?: string | undefined;
}

export interface Mailer {
  send(msg: MailMessage, signal: AbortSignal): Promise<void>;
}

export class SmtpMailer implements Mailer {
  private readonly options: SMTPTransport.Options;

  constructor(private readonly s: SmtpSettings) {
    this.options = {
      host: s.host,
      port: s.port,
      secure: s.secure,
      connectionTimeout: s.timeoutMs,
      greetingTimeout: s.timeoutMs,
      socketTimeout: s.timeoutMs,
      ...(s.username === '' ? {} : { auth: { user: s.username, pass: s.password }, requireTLS: !s.secure }),
    };
  }

  async send(msg: MailMessage, signal: AbortSignal): Promise<void> {
    // Loaded at the first mail, not at start: most nodes never send one (idle RSS).
    const { default: nodemailer } = await import('nodemailer');
    const transport = nodemailer.createTransport(this.options);
    const aborted = new Promise<never>((_, reject) => {
      const onAbort = (): void => reject(transient(`the SMTP server ${this.s.host}:${this.s.port} did not accept the mail in time (alerts.action_timeout_ms)`));
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    aborted.catch(() => undefined);
    try {
      await Promise.race([transport.sendMail({ from: this.s.sender, to: msg.to, subject: msg.subject, text: msg.text, html: msg.html }), aborted]);
    } catch (err) {
      throw this.failure(err);
    } finally {
      transport.close();
    }
  }

  private failure(err: unknown): DeliveryError {
    if (err instanceof DeliveryError) return err;
    const e = err as { responseCode?: number; code?: string; message?: string };
    const where = `SMTP server ${this.s.host}:${this.s.port}`;
    const text = (e.message ?? String(err)).replace(/\s+/g, ' ').slice(0, 300);
    if (e.code === 'ETLS') {
      return permanent('E_ACTION_FAILED', `${where} did not start TLS (${text}); with alerts.smtp_username set, credentials are only sent over TLS: use a server that offers STARTTLS, or alerts.smtp_secure`);
    }
    if (typeof e.responseCode === 'number') {
      return e.responseCode >= 500 ? permanent('E_ACTION_FAILED', `${where} refused the mail: ${text}`) : transient(`${where} deferred the mail: ${text}`);
    }
    return transient(`sending mail via ${where} failed: ${e.code ?? ''} ${text}`.trim());
  }
}
