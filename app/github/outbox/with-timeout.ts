/** `work`, or a rejection with `message` once `ms` passed (`work` itself is left to finish). */
export async function withTimeout(work: Promise<void>, ms: number, message: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  work.catch(() => undefined);
  try {
    await Promise.race([work, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
