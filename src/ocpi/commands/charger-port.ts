import type { OcpiVersion } from '../core/envelope.js';
import type { CommandType } from './schemas.js';

/**
 * How the commands Receiver reaches our chargers (docs/ROAMING.md "Commands"): the roaming
 * bridge implements it (src/roaming/commands.ts). The Receiver has checked the request against
 * what OCPI holds (the location, EVSE and connector exist; the session is the caller's; the token
 * is valid); the port finds the charger, hands the OCPP call to it and answers at once.
 */
export interface ChargerCommandPort {
  execute(request: ChargerCommandRequest): Promise<ChargerCommandAnswer>;
}

export interface ChargerCommandRequest {
  /** the partner (its onboarded party, `cc-pid`) whose outbox takes the result */
  partnerKey: string;
  version: OcpiVersion;
  command: CommandType;
  body: {
    response_url: string;
    location_id?: string;
    evse_uid?: string;
    connector_id?: string;
    session_id?: string;
    reservation_id?: string | number;
    expiry_date?: string;
    /** the command's Token (2.2.1 or 2.1.1 shape), as the Receiver validated it (2.2.1: of a party the caller speaks for) */
    token?: { uid: string; valid: boolean; type?: string };
    /** 2.2.1 StartSession: the eMSP's reference, carried by the session and CDR that follow */
    authorization_reference?: string;
  };
}

export interface ChargerCommandAnswer {
  result: 'ACCEPTED' | 'REJECTED';
  /** why, in words for the partner (2.2.1 `message`) */
  reason: string;
  /** seconds the partner may wait for the result (2.2.1 `timeout`) */
  timeout_s: number;
}
