/** Errors the engine raises about itself (not a user's SQL error). */

/** An engine bug or an impossible state: never a user's SQL error. */
export class EngineInternalError extends Error {}
