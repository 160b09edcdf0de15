export { FileService, type FileLimits, type TablePacker } from './file-service.js';
export { BlobStore, contentHash } from './blob-store.js';
export { checkFileName, SHARED_PREFIX, MAX_FILE_NAME_CHARS, type FileKind } from './names.js';
export { readMultipartFile, receiveMultipartFile, MAX_PARTS, type ReceivedFile } from './multipart.js';
export { parseTable, type ParsedTable } from './parse.js';
export { packTable, tableKey, viewsOf, cellValue, type PackedTable, type TableViews } from './packed.js';
export { runPackTask, type PackSource, type PackTask, type PackTaskResult } from './pack-task.js';
