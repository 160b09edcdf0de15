/** Bounds on alert and action definitions (request-time validation). */

export const MAX_NAME_CHARS = 200;
export const MAX_DESCRIPTION_CHARS = 4096;
export const MAX_LABELS = 100;
export const MAX_LABEL_CHARS = 200;
/** Actions one alert may invoke. */
export const MAX_ALERT_ACTIONS = 50;
/** Same bound as the query API's queryString. */
export const MAX_QUERY_CHARS = 64 * 1024;
/** Longest query window of an alert (it is re-run every evaluation interval). */
export const MAX_WINDOW_MS = 365 * 24 * 3600_000;
/** Throttle times up to a year. */
export const MAX_THROTTLE_MS = 365 * 24 * 3600_000;
export const MAX_FIELD_NAME_CHARS = 1000;
export const MAX_TEMPLATE_CHARS = 64 * 1024;
export const MAX_URL_CHARS = 4096;
export const MAX_HEADERS = 50;
export const MAX_HEADER_VALUE_CHARS = 8192;
export const MAX_SLACK_FIELDS = 50;
export const MAX_RECIPIENTS = 100;
export const MAX_SECRET_CHARS = 1024;
