import { pipeline, Transform, type Readable } from 'node:stream';
import { Counter, type Registry } from 'prom-client';

/**
 * `fluksio_blob_bytes_total{direction="in"|"out"}`: the blob bytes that passed through
 * this control plane process (uploads received, downloads sent). With S3 only the run
 * pages' downloads count: runners and `fluksio pull` move bytes with presigned URLs.
 */
export class BlobByteCounters {
  private readonly bytes: Counter<'direction'>;

  constructor(registry: Registry) {
    this.bytes = new Counter({
      name: 'fluksio_blob_bytes_total',
      help: 'Blob bytes that passed through this process: uploads received (in), downloads sent (out)',
      labelNames: ['direction'],
      registers: [registry],
    });
    // Both series exist from the start, so a scrape shows 0 rather than nothing.
    this.bytes.inc({ direction: 'in' }, 0);
    this.bytes.inc({ direction: 'out' }, 0);
  }

  /**
   * `source`, counted as `direction` as it flows; an error or an early end of either side
   * ends both (stream.pipeline), so neither a file nor a request is left open.
   */
  count(source: Readable, direction: 'in' | 'out'): Readable {
    const bytes = this.bytes;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        bytes.inc({ direction }, chunk.length);
        callback(null, chunk);
      },
    });
    // The error reaches whoever reads `counter`; nothing more to do with it here.
    return pipeline(source, counter, () => undefined);
  }
}
