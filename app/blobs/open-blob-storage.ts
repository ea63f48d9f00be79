import { resolve } from 'node:path';
import type { ControlPlaneSettings } from '../control-plane-settings.js';
import { DirectoryBlobStorage } from './directory-blob-storage.js';
import { S3BlobStorage } from './s3-blob-storage.js';

/** The blob storage the settings name: `<dataDir>/blobs`, or the S3 bucket. */
export function openBlobStorage(
  settings: Pick<ControlPlaneSettings, 'dataDir' | 'blobStorage'>,
): DirectoryBlobStorage | S3BlobStorage {
  return settings.blobStorage.kind === 's3'
    ? new S3BlobStorage(settings.blobStorage)
    : new DirectoryBlobStorage(resolve(settings.dataDir, 'blobs'));
}

/** The settings that say where `storage` is, for a message that asks to fix them. */
export function settingOf(storage: DirectoryBlobStorage | S3BlobStorage): string {
  return storage instanceof S3BlobStorage
    ? 'FLUKSIO_S3_BUCKET (and FLUKSIO_S3_ENDPOINT)'
    : 'FLUKSIO_DATA_DIR';
}
