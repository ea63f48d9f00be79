// A child process that stores one blob in a DirectoryBlobStorage, for the durability test
// (directory-blob-durability.test.ts), which watches its system calls with strace.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { DirectoryBlobStorage } from '../../app/blobs/directory-blob-storage.js';
import { blobDigest } from '../../schemas/blob-digest.js';

const [root, text] = process.argv.slice(2);
if (!root || text === undefined) throw new Error('usage: store-blob-child.ts <root> <text>');
const bytes = Buffer.from(text);
const digest = blobDigest(createHash('sha256').update(bytes).digest('hex'));
await new DirectoryBlobStorage(root).write(digest, Readable.from([bytes]), 1 << 20);
process.stdout.write(`${digest}\n`);
