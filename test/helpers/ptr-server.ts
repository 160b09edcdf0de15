/**
 * A name server for tests, on 127.0.0.1 (UDP, a free port): it answers PTR questions for the
 * addresses in `names`, NXDOMAIN for the others, and nothing at all for those in `silent`. It
 * records the addresses it was asked for in `asked`.
 */
import { createSocket } from 'node:dgram';

export interface PtrServer {
  port: number;
  names: Record<string, string>;
  silent: Set<string>;
  asked: string[];
  close(): void;
}

function question(q: Buffer): { name: string; end: number } {
  const labels: string[] = [];
  let i = 12;
  while (q[i]! > 0) {
    labels.push(q.subarray(i + 1, i + 1 + q[i]!).toString('ascii'));
    i += q[i]! + 1;
  }
  return { name: labels.join('.'), end: i + 5 };
}

function encodeName(name: string): Buffer {
  return Buffer.concat([...name.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'ascii')])), Buffer.from([0])]);
}

export async function startPtrServer(names: Record<string, string>): Promise<PtrServer> {
  const socket = createSocket('udp4');
  const srv: PtrServer = { port: 0, names, silent: new Set(), asked: [], close: () => socket.close() };
  const answer = (q: Buffer): Buffer | null => {
    const { name, end } = question(q);
    const ip = name.replace(/\.in-addr\.arpa$/i, '').split('.').reverse().join('.');
    srv.asked.push(ip);
    if (srv.silent.has(ip)) return null;
    const host = srv.names[ip];
    const header = Buffer.alloc(12);
    q.copy(header, 0, 0, 2);
    header.writeUInt16BE(host === undefined ? 0x8183 : 0x8180, 2); // a response: NXDOMAIN or an answer
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(host === undefined ? 0 : 1, 6);
    const asked = q.subarray(12, end);
    if (host === undefined) return Buffer.concat([header, asked]);
    const rdata = encodeName(host);
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // the name of the question
    rr.writeUInt16BE(12, 2); // PTR
    rr.writeUInt16BE(1, 4); // IN
    rr.writeUInt32BE(60, 6);
    rr.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([header, asked, rr, rdata]);
  };
  socket.on('message', (msg, rinfo) => {
    const r = answer(msg);
    if (r !== null) socket.send(r, rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', () => r()));
  srv.port = socket.address().port;
  return srv;
}
