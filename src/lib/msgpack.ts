/** MessagePack encoding for our binary formats; msgpackr's only importer. */
import { Packr } from 'msgpackr';

// Plain maps as objects, no record extension: files stay readable by any msgpack decoder.
const packr = new Packr({ useRecords: false, moreTypes: false });

export function pack(value: unknown): Buffer {
  return packr.pack(value);
}

export function unpack(data: Uint8Array): unknown {
  return packr.unpack(data);
}
