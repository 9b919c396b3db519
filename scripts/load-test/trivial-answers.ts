/**
 * What the baseline servers of the load test answer: the smallest valid OCPP 1.6 result for each
 * action the generator sends, computed from nothing and stored nowhere.
 */
let nextTransactionId = 0;

export function trivialAnswer(action: string): Record<string, unknown> {
  switch (action) {
    case 'BootNotification':
      return { status: 'Accepted', currentTime: new Date().toISOString(), interval: 300 };
    case 'Heartbeat':
      return { currentTime: new Date().toISOString() };
    case 'Authorize':
      return { idTagInfo: { status: 'Accepted' } };
    case 'StartTransaction':
      return { transactionId: ++nextTransactionId, idTagInfo: { status: 'Accepted' } };
    default:
      // StatusNotification, MeterValues, StopTransaction: an empty result is valid
      return {};
  }
}

/** The actions the generator's OCPP 1.6 chargers send in the benchmark workloads. */
export const BENCH_ACTIONS = [
  'BootNotification',
  'Heartbeat',
  'StatusNotification',
  'Authorize',
  'StartTransaction',
  'MeterValues',
  'StopTransaction',
] as const;
