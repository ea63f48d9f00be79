/**
 * Exponential moving average with TensorBoard's debiasing: `weight` 0 leaves the values
 * as they are, 0.99 smooths heavily; the first points are not pulled toward 0.
 */
export function smooth(values: readonly (number | null)[], weight: number): (number | null)[] {
  if (weight <= 0) return [...values];
  let last = 0;
  let count = 0;
  return values.map((value) => {
    if (value === null || !Number.isFinite(value)) return value;
    last = last * weight + (1 - weight) * value;
    count++;
    return last / (1 - weight ** count);
  });
}
