/**
 * Why an action's delivery failed, and whether trying again may help. A `DeliveryError` carries
 * its own `transient` flag because the same code covers both kinds: an HTTP 503 or a timeout is
 * worth a retry, a 404 or a refused address is not.
 */
import { LogsvcError, type ErrorCode } from '../lib/errors.js';

export class DeliveryError extends LogsvcError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly transient: boolean,
  ) {
    super(code, message);
    this.name = 'DeliveryError';
  }
}

/** A failure that trying again will not fix (bad target, 4xx, refused address). */
export const permanent = (code: ErrorCode, message: string): DeliveryError => new DeliveryError(code, message, false);

/** A failure a later attempt may not see (timeout, connection reset, 5xx). */
export const transient = (message: string): DeliveryError => new DeliveryError('E_ACTION_FAILED', message, true);
