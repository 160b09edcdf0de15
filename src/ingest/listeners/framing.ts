/**
 * RFC 6587 framing of syslog over TCP, decided per message: a frame that starts with a digit is
 * octet-counted (`MSG-LEN SP SYSLOG-MSG`), anything else runs to the next LF (non-transparent
 * framing; a CR before the LF is dropped). Syslog messages start with "<PRI>", never a digit, so
 * the two cannot be confused. Bounds: a newline-framed message longer than `maxMessageBytes` is cut
 * to it (the rest, up to the LF, is discarded); an octet count above it, or a count that is not
 * one, cannot be resynchronised and is a protocol error (the caller closes the connection).
 */

export class FramingError extends Error {
  override name = 'FramingError';
}

export class TcpFramer {
  private buf: Buffer = Buffer.alloc(0);
  /** Discarding the rest of an over-long newline-framed message until its LF. */
  private skipping = false;
  /** Messages cut to maxMessageBytes so far (reported by the caller). */
  truncated = 0;

  constructor(private readonly maxMessageBytes: number) {}

  /** Feeds bytes; returns the complete messages in them. Throws FramingError on a bad octet count. */
  push(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    const data = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    let at = 0;
    for (;;) {
      if (this.skipping) {
        const lf = data.indexOf(0x0a, at);
        if (lf < 0) {
          at = data.length;
          break;
        }
        this.skipping = false;
        at = lf + 1;
      }
      if (at >= data.length) break;
      const first = data[at]!;
      if (first >= 0x30 && first <= 0x39) {
        // Octet counting: digits, one space, then exactly that many bytes.
        let i = at;
        let len = 0;
        while (i < data.length && data[i]! >= 0x30 && data[i]! <= 0x39) {
          len = len * 10 + (data[i]! - 0x30);
          if (len > this.maxMessageBytes) throw new FramingError(`octet-counted frame of more than ${this.maxMessageBytes} bytes (listeners.max_message_bytes)`);
          i++;
        }
        if (i >= data.length) break;
        if (data[i] !== 0x20) throw new FramingError('octet-counted frame: the length is not followed by a space');
        if (i + 1 + len > data.length) break;
        out.push(Buffer.from(data.subarray(i + 1, i + 1 + len)));
        at = i + 1 + len;
        continue;
      }
      const lf = data.indexOf(0x0a, at);
      if (lf < 0) {
        if (data.length - at > this.maxMessageBytes) {
          out.push(Buffer.from(data.subarray(at, at + this.maxMessageBytes)));
          this.truncated++;
          this.skipping = true;
          at = data.length;
        }
        break;
      }
      let end = lf;
      if (end > at && data[end - 1] === 0x0d) end--;
      if (end - at > this.maxMessageBytes) {
        end = at + this.maxMessageBytes;
        this.truncated++;
      }
      if (end > at) out.push(Buffer.from(data.subarray(at, end)));
      at = lf + 1;
    }
    this.buf = at >= data.length ? Buffer.alloc(0) : Buffer.from(data.subarray(at));
    return out;
  }

  /** What is left at the end of the connection: a last message without its LF. */
  end(): Buffer[] {
    const rest = this.buf;
    this.buf = Buffer.alloc(0);
    if (this.skipping || rest.length === 0) return [];
    const first = rest[0]!;
    if (first >= 0x30 && first <= 0x39) return [];
    let end = rest.length;
    if (rest[end - 1] === 0x0d) end--;
    return end > 0 ? [Buffer.from(rest.subarray(0, Math.min(end, this.maxMessageBytes)))] : [];
  }
}
