import { ErrorBody } from '@flowdesk/contracts';

/** The error answers every authenticated route can give, for the OpenAPI document. */
export const errorResponses = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
} as const;
