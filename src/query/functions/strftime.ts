/**
 * The strftime-like patterns of formatTime(): %Y %y %C %m %d %e %j %H %k %I %l %M %S %L (millis)
 * %N (nanos) %p %P %a %A %b %h %B %Z %z %s (epoch seconds) %F %T %D %R %c %u %w %n %t %%. Names are
 * English; week numbers are left out. The zone gives the wall-clock fields.
 */
import { formatOffset, type Zone } from './zones.js';

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const p2 = (n: number): string => String(n).padStart(2, '0');
const p3 = (n: number): string => String(n).padStart(3, '0');

/** Formats epoch ms `ms` with `format` in `zone`. */
export function strftime(ms: number, format: string, zone: Zone): string {
  const off = zone.offsetAt(ms);
  const d = new Date(ms + off * 60_000);
  const Y = d.getUTCFullYear();
  const mo = d.getUTCMonth();
  const day = d.getUTCDate();
  const H = d.getUTCHours();
  const M = d.getUTCMinutes();
  const S = d.getUTCSeconds();
  const L = d.getUTCMilliseconds();
  const wd = d.getUTCDay();
  const h12 = H % 12 === 0 ? 12 : H % 12;
  const yday = Math.floor((Date.UTC(Y, mo, day) - Date.UTC(Y, 0, 1)) / 86_400_000) + 1;
  let out = '';
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== '%' || i + 1 >= format.length) {
      out += c;
      continue;
    }
    const f = format[++i]!;
    switch (f) {
      case 'Y': out += String(Y); break;
      case 'y': out += p2(Y % 100); break;
      case 'C': out += p2(Math.floor(Y / 100)); break;
      case 'm': out += p2(mo + 1); break;
      case 'd': out += p2(day); break;
      case 'e': out += String(day).padStart(2, ' '); break;
      case 'j': out += p3(yday); break;
      case 'H': out += p2(H); break;
      case 'k': out += String(H).padStart(2, ' '); break;
      case 'I': out += p2(h12); break;
      case 'l': out += String(h12).padStart(2, ' '); break;
      case 'M': out += p2(M); break;
      case 'S': out += p2(S); break;
      case 'L': out += p3(L); break;
      case 'N': out += `${p3(L)}000000`; break;
      case 'p': out += H < 12 ? 'AM' : 'PM'; break;
      case 'P': out += H < 12 ? 'am' : 'pm'; break;
      case 'a': out += DAYS[wd]!.slice(0, 3); break;
      case 'A': out += DAYS[wd]!; break;
      case 'b':
      case 'h': out += MONTHS[mo]!.slice(0, 3); break;
      case 'B': out += MONTHS[mo]!; break;
      case 'u': out += String(wd === 0 ? 7 : wd); break;
      case 'w': out += String(wd); break;
      case 'z': out += formatOffset(off, false); break;
      case 'Z': out += zone.name; break;
      case 's': out += String(Math.floor(ms / 1000)); break;
      case 'F': out += `${Y}-${p2(mo + 1)}-${p2(day)}`; break;
      case 'T': out += `${p2(H)}:${p2(M)}:${p2(S)}`; break;
      case 'R': out += `${p2(H)}:${p2(M)}`; break;
      case 'D': out += `${p2(mo + 1)}/${p2(day)}/${p2(Y % 100)}`; break;
      case 'c': out += `${DAYS[wd]!.slice(0, 3)} ${MONTHS[mo]!.slice(0, 3)} ${String(day).padStart(2, ' ')} ${p2(H)}:${p2(M)}:${p2(S)} ${Y}`; break;
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case '%': out += '%'; break;
      default: out += `%${f}`;
    }
  }
  return out;
}
