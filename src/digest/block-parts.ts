/**
 * What a sealed block is made of before encoding: the encoded event sections of the queue records
 * that contributed to it (one datasource's group per record), with each record's queue position.
 * Building the block's columns from these happens on a worker thread, so the main thread never
 * decodes an event.
 */
import { decodeGroupColumns } from '../events/index.js';
import { appendColumns, assembleBlock, emptyColumns, encodeBlock } from '../segments/block.js';
import { lz4Codec } from '../segments/codec.js';
import { nativeBlockBuilder } from './native-block.js';

export interface BlockPart {
  /** The group's encoded events (copied into the block task when it crosses to a worker). */
  events: Uint8Array;
  /** Queue offset of the record. */
  offset: number;
  /** Index, within the record, of the group's first event. */
  base: number;
  /** Events at the start of the group already in durable segments (a replay), to leave out. */
  skip: number;
  /** The record's ingest time. */
  at: number;
}

/** The block of these parts: by the native builder where it takes them, else in JavaScript. */
export function buildBlock(parts: readonly BlockPart[]): Buffer {
  const content = nativeBlockBuilder?.build(parts) ?? null;
  return content === null ? buildBlockInJs(parts) : assembleBlock(content, lz4Codec);
}

/** The JavaScript builder: decode the sections by column, then encode the block. */
export function buildBlockInJs(parts: readonly BlockPart[]): Buffer {
  const c = emptyColumns();
  for (const p of parts) appendColumns(c, decodeGroupColumns(p.events), p.skip, p.at, p.offset, p.base);
  return encodeBlock(c, lz4Codec);
}
