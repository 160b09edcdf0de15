import t from 'tap';
import { ManualClock } from '../../../src/lib/clock.js';
import { SyslogParser } from '../../../src/ingest/parsers/syslog.js';

const NOV_2024 = Date.UTC(2024, 10, 1, 12, 0, 0);
const syslog = new SyslogParser(new ManualClock(NOV_2024));

t.test('RFC 5424 with structured data, BOM and kv pairs in the message', async (t) => {
  const line =
    '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 ' +
    '[exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"] ' +
    '\uFEFFAn application event log entry user=alice host=evil';
  const r = syslog.parse(line, 100);
  t.equal(r.error, null);
  t.equal(r.timestamp, Date.UTC(2003, 9, 11, 22, 14, 15, 3));
  t.equal(r.timezone, 'Z');
  t.same(r.fields, {
    priority: '165',
    facility: '20',
    severity: '5',
    host: 'mymachine.example.com',
    app: 'evntslog',
    msgid: 'ID47',
    'exampleSDID@32473.iut': '3',
    'exampleSDID@32473.eventSource': 'Application',
    'exampleSDID@32473.eventID': '1011',
    'examplePriority@32473.class': 'high',
    message: 'An application event log entry user=alice host=evil',
    user: 'alice',
  });
  t.equal(r.fields['host'], 'mymachine.example.com', 'kv pairs do not replace syslog fields');
});

t.test('RFC 5424 with offsets, nil values and SD escapes', async (t) => {
  const r = syslog.parse('<34>1 2024-03-05T14:22:01.123456+05:30 host app 4242 - [x@1 a="q\\"uo\\]te\\\\d" b="c:\\d"] hi', 100);
  t.equal(r.error, null);
  t.equal(r.timestamp, Date.UTC(2024, 2, 5, 8, 52, 1, 123));
  t.equal(r.timezone, '+05:30');
  t.same(r.fields, {
    priority: '34',
    facility: '4',
    severity: '2',
    host: 'host',
    app: 'app',
    pid: '4242',
    'x@1.a': 'q"uo]te\\d',
    'x@1.b': 'c:\\d',
    message: 'hi',
  });

  const nil = syslog.parse('<0>1 - - - - - -', 100);
  t.equal(nil.error, null);
  t.equal(nil.timestamp, null, 'a nil timestamp leaves the ingest time');
  t.equal(nil.timezone, null);
  t.same(nil.fields, { priority: '0', facility: '0', severity: '0' });

  const sdOnly = syslog.parse('<14>1 - h a p m [x a="1"][y b="2"]', 100);
  t.equal(sdOnly.error, null);
  t.same([sdOnly.fields['x.a'], sdOnly.fields['y.b'], sdOnly.fields['message']], ['1', '2', undefined], 'no message after SD');

  const noSd = syslog.parse('<14>1 2024-03-05T14:22:01Z h a p m', 100);
  t.equal(noSd.error, null, 'a header without structured data is tolerated');
  t.same(noSd.fields['msgid'], 'm');

  const noZone = syslog.parse('<14>1 2024-03-05T14:22:01 h a p m - x', 100);
  t.equal(noZone.timestamp, Date.UTC(2024, 2, 5, 14, 22, 1), 'a zone-less timestamp is read as UTC');
  t.equal(noZone.timezone, 'Z');
});

t.test('RFC 3164 with a pid', async (t) => {
  const r = syslog.parse("<34>Oct 11 22:14:15 mymachine su[1234]: 'su root' failed for lonvick on /dev/pts/8\n", 100);
  t.equal(r.error, null);
  t.equal(r.timestamp, Date.UTC(2024, 9, 11, 22, 14, 15));
  t.equal(r.timezone, 'Z');
  t.same(r.fields, {
    priority: '34',
    facility: '4',
    severity: '2',
    host: 'mymachine',
    app: 'su',
    pid: '1234',
    message: "'su root' failed for lonvick on /dev/pts/8",
  });
});

t.test('RFC 3164 without a pid, with kv pairs', async (t) => {
  const r = syslog.parse('<13>Feb  5 17:32:18 10.0.0.99 postfix/smtpd: connect from unknown level=warn app=x', 100);
  t.equal(r.error, null);
  t.equal(r.timestamp, Date.UTC(2024, 1, 5, 17, 32, 18));
  t.same(r.fields, {
    priority: '13',
    facility: '1',
    severity: '5',
    host: '10.0.0.99',
    app: 'postfix/smtpd',
    message: 'connect from unknown level=warn app=x',
    level: 'warn',
  });
});

t.test('RFC 3164 variants: no PRI, no host, no tag, ISO timestamp, fractions', async (t) => {
  const noPri = syslog.parse('Mar  5 14:22:01 web-1 sshd[99]: Accepted publickey for bob', 100);
  t.equal(noPri.error, null);
  t.same(noPri.fields, { host: 'web-1', app: 'sshd', pid: '99', message: 'Accepted publickey for bob' });
  t.equal(noPri.timestamp, Date.UTC(2024, 2, 5, 14, 22, 1));

  const noHost = syslog.parse("<34>Oct 11 22:14:15 su: 'su root' failed", 100);
  t.same(noHost.fields, { priority: '34', facility: '4', severity: '2', app: 'su', message: "'su root' failed" });

  const noTag = syslog.parse('<34>Oct  1 22:14:15 host just a message', 100);
  t.same(noTag.fields, { priority: '34', facility: '4', severity: '2', host: 'host', message: 'just a message' });
  t.equal(noTag.timestamp, Date.UTC(2024, 9, 1, 22, 14, 15));

  const oneDigitDay = syslog.parse('Oct 1 22:14:15 host app: m', 100);
  t.equal(oneDigitDay.timestamp, Date.UTC(2024, 9, 1, 22, 14, 15));

  const iso = syslog.parse('<13>2024-03-05T14:22:01.5+01:00 host app[7]: hi', 100);
  t.equal(iso.error, null);
  t.equal(iso.timestamp, Date.UTC(2024, 2, 5, 13, 22, 1, 500));
  t.equal(iso.timezone, '+01:00');
  t.same(iso.fields, { priority: '13', facility: '1', severity: '5', host: 'host', app: 'app', pid: '7', message: 'hi' });

  const frac = syslog.parse('Oct 11 22:14:15.25 host app: m', 100);
  t.equal(frac.timestamp, Date.UTC(2024, 9, 11, 22, 14, 15, 250));

  const bare = syslog.parse('<34>Oct 11 22:14:15', 100);
  t.equal(bare.error, null);
  t.same(bare.fields, { priority: '34', facility: '4', severity: '2' });
});

t.test('the year of an RFC 3164 timestamp is the one closest to now, at most a day ahead', async (t) => {
  const at = (iso: string) => new SyslogParser(new ManualClock(Date.parse(iso)));
  const newYear = at('2024-01-01T00:10:00Z');
  t.equal(newYear.parse('Dec 31 23:59:00 h a: m', 10).timestamp, Date.UTC(2023, 11, 31, 23, 59), 'late December read in January');
  t.equal(newYear.parse('Jan  1 12:00:00 h a: m', 10).timestamp, Date.UTC(2024, 0, 1, 12), 'hours ahead is this year');
  t.equal(newYear.parse('Jan  2 12:00:00 h a: m', 10).timestamp, Date.UTC(2023, 0, 2, 12), 'more than a day ahead is last year');
  const newYearsEve = at('2023-12-31T23:00:00Z');
  t.equal(newYearsEve.parse('Jan  1 10:00:00 h a: m', 10).timestamp, Date.UTC(2024, 0, 1, 10), 'a sender east of us already in the new year');
  const leap = at('2025-03-01T00:00:00Z');
  t.equal(leap.parse('Feb 29 10:00:00 h a: m', 10).timestamp, Date.UTC(2024, 1, 29, 10), 'Feb 29 goes back to the last leap year');
});

t.test('unparseable lines are errors with no fields', async (t) => {
  const bad = [
    '',
    'hello world',
    '<999>1 - - - - - -',
    '<>Oct 11 22:14:15 h a: m',
    '<34Oct 11 22:14:15 h a: m',
    '<34>Foo 11 22:14:15 h a: m',
    '<34>Oct 11 25:14:15 h a: m',
    '<34>Oct 32 22:14:15 h a: m',
    'Feb 30 10:00:00 host x: y',
    '<34>Oct 11 22:14 h a: m',
    '<34>1 yesterday h a p m - x',
    '<34>1 2024-02-30T00:00:00Z h a p m - x',
    '<34>1 2024-03-05T14:22:01Z h a',
    '<34>1 2024-03-05T14:22:01Z h a p m [x a=1] m',
    '<34>1 2024-03-05T14:22:01Z h a p m [x a="1" m',
    '<34>1 2024-03-05T14:22:01Z h a p m [ a="1"] m',
    '<34>1 2024-03-05T14:22:01Z h a p m x',
    '<34>1 - h a p m [x a="unterminated \\"',
  ];
  for (const line of bad) {
    const r = syslog.parse(line, 100);
    t.match(r.error, /^not a syslog line: /, JSON.stringify(line));
    t.same(r.fields, {});
    t.equal(r.timestamp, null);
  }
});

t.test('maxFields', async (t) => {
  const r = syslog.parse('<34>Oct 11 22:14:15 host app[1]: m a=1 b=2', 5);
  t.same(r.fields, { priority: '34', facility: '4', severity: '2', host: 'host', app: 'app' });
  const kv = syslog.parse('Oct 11 22:14:15 host app: m a=1 b=2', 3);
  t.same(kv.fields, { host: 'host', app: 'app', message: 'm a=1 b=2' });
  const sd = syslog.parse('<34>1 - h - - - [x a="1" b="2" c="3"] m', 6);
  t.same(sd.fields, { priority: '34', facility: '4', severity: '2', host: 'h', 'x.a': '1', 'x.b': '2' });
  t.equal(sd.error, null);
});
