/**
 * Largest frame on the Core socket; a bigger one is answered with MESSAGE_TOO_LARGE and the connection closed. In a
 * file of its own so clients that avoid the schema library can frame for Core.
 */
export const MAX_CORE_FRAME_BYTES = 16 * 1024 * 1024;
