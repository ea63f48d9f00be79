import type { Socket } from 'node:net';

/**
 * Has a connection whose request body is still arriving close the way nginx's lingering
 * close does. Closed outright, its unread bytes make the kernel send a reset, which can
 * reach the client before the answer it was sent and destroy it there: a refused upload
 * would see "connection reset" instead of its 401 or 413. Instead, once the answer is out
 * the write side is closed and whatever still arrives is read and dropped — never kept —
 * until the client hangs up or `lingerMs` has passed, then the connection is destroyed.
 */
export function lingerBeforeClose(socket: Socket, lingerMs: number): void {
  // Node's HTTP server calls destroySoon() once the answer of a `Connection: close`
  // response is written; nothing else calls it on a server socket.
  socket.destroySoon = function lingeringClose(this: Socket): void {
    this.end();
    this.pause();
    // Node resumes a request it discards; what still arrives stays in the kernel instead.
    this.resume = () => this;
    const timer = setTimeout(() => this.destroy(), lingerMs);
    this.once('close', () => clearTimeout(timer));
  };
}
