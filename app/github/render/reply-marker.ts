/**
 * The hidden marker a reply to a `/fluksio` command ends with: the id of the delivery it
 * answers (`<!-- fluksio-reply: <delivery-id> -->`). A delivery makes at most one reply, so
 * an attempt processing it again — its worker died between posting and recording — finds
 * the reply already there and does not post a second.
 */
export function replyMarker(deliveryId: string): string {
  // Delivery ids are GUIDs (accept-delivery.ts): nothing in one can end an HTML comment.
  if (!/^[A-Za-z0-9-]+$/.test(deliveryId))
    throw new Error(`Delivery id ${JSON.stringify(deliveryId)} cannot be put in a reply marker`);
  return `<!-- fluksio-reply: ${deliveryId} -->`;
}

/** `body` with the marker of `deliveryId` after it. */
export function markReply(body: string, deliveryId: string): string {
  return `${body}\n\n${replyMarker(deliveryId)}`;
}

/** Whether a comment's body carries the reply marker of `deliveryId`. */
export function isReplyTo(body: string, deliveryId: string): boolean {
  return body.includes(replyMarker(deliveryId));
}
