/** What the coordinator and its generator processes say to each other over IPC. */
export interface ChargerSpec {
  id: string;
  password: string;
  protocol: 'ocpp1.6' | 'ocpp2.0.1';
  url: string;
  /** runs transactions with meter values */
  transacting: boolean;
  /**
   * comparison plans: the status each connector (1, 2, ...) reports after the boot (bench-fleet.ts);
   * without it connector 1 reports Available
   */
  statuses?: string[];
}

export interface GeneratorPlan {
  type: 'plan';
  chargers: ChargerSpec[];
  /** connections started per second by this generator; 0 = as fast as maxConnecting allows */
  connectRate: number;
  maxConnecting: number;
  heartbeatS: number;
  meterEveryS: number;
  transactionS: number;
  /** idle sockets only (the bare ws baseline): no OCPP at all */
  idle: boolean;
  /**
   * the comparison workloads (compare.ts): boot and report status, no heartbeat or transaction
   * loops; with `openTransaction` each charger then starts one transaction (and is counted as
   * ready only once it has) and waits for flood orders
   */
  bench?: { openTransaction: boolean };
}

/** Send `action` back to back from the ready chargers, `inFlight` calls at a time, for `seconds`. */
export interface FloodOrder {
  type: 'flood';
  /** StatusNotification: connector 1 alternates between Available and Unavailable */
  action: 'MeterValues' | 'Heartbeat' | 'StatusNotification';
  inFlight: number;
  seconds: number;
}

/** A generator's answer to a flood order. */
export interface FloodReport {
  type: 'flood-done';
  messages: number;
  errors: number;
  lastError: string | undefined;
  histogram: number[];
  seconds: number;
}

export interface GeneratorReport {
  type: 'report';
  connected: number;
  booted: number;
  /** connected, booted and first StatusNotification answered */
  ready: number;
  messages: number;
  errors: number;
  disconnects: number;
  transactions: number;
  /**
   * starts whose id tag the CSMS refused (1.6 idTagInfo, 2.0.1 idTokenInfo not Accepted): a target
   * that lets in no such tag (README: OCPP_UNKNOWN_ID_TAGS=accept) runs no real transaction
   */
  refused: number;
  /** connection attempts that failed and were tried again */
  retries: number;
  histogram: number[];
  lastError: string | undefined;
  lastRetryReason: string | undefined;
  /** comparison plans: milliseconds from the plan's arrival until every charger of this generator was ready */
  readyAfterMs?: number | undefined;
}

export type ToGenerator = GeneratorPlan | FloodOrder | { type: 'stop' };
export type FromGenerator = GeneratorReport | FloodReport;
