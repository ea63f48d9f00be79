import type { Socket } from 'node:net';

/**
 * Has a connection whose request body is still arriving close only after `lingerMs`.
 * Closed outright, its unread bytes make the kernel send a reset, which can reach the
 * client before the answer it was sent and destroy it there: a refused upload would see
 * "connection reset" instead of its 401 or 413. Instead, once the answer is out the write
 * side is closed and reading stops — what still arrives waits in the kernel's buffer,
 * never in memory here — and the connection is destroyed when the client hangs up or
 * `lingerMs` has passed, whichever comes first.
 */
export function lingerBeforeClose(socket: Socket, lingerMs: number): void {
  // Node's HTTP server calls destroySoon() once the answer of a `Connection: close`
  // response is written; nothing else calls it on a server socket.
  socket.destroySoon = function lingeringClose(this: Socket): void {
    this.end();
    this.pause();
    // Node resumes a request body it discards, which would read the rest of it: not here.
    this.resume = () => this;
    const timer = setTimeout(() => this.destroy(), lingerMs);
    this.once('close', () => clearTimeout(timer));
  };
}
