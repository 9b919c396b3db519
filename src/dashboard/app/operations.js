// The operations of docs/CSMS.md "Operations" the charger page offers: the versions that have
// each, an example body, and the method (PUT for the charge point's settings).
export const OPERATIONS = {
  'change-availability': [['ocpp1.6', 'ocpp2.0.1'], { operative: false, evse_id: 1 }],
  reset: [['ocpp1.6', 'ocpp2.0.1'], { type: 'soft' }],
  'clear-cache': [['ocpp1.6', 'ocpp2.0.1'], {}],
  unlock: [['ocpp1.6', 'ocpp2.0.1'], { evse_id: 1 }],
  // 2.0.1 asks for a StatusNotification of one connector (F06.FR.12); on 1.6 the two are one number
  trigger: [['ocpp1.6', 'ocpp2.0.1'], { message: 'StatusNotification', evse_id: 1, connector_id: 1 }],
  'get-configuration': [['ocpp1.6'], { keys: [] }],
  'change-configuration': [['ocpp1.6'], { key: 'HeartbeatInterval', value: '300' }],
  'get-variables': [['ocpp2.0.1'], { variables: [{ component: 'OCPPCommCtrlr', variable: 'HeartbeatInterval' }] }],
  'set-variables': [
    ['ocpp2.0.1'],
    { variables: [{ component: 'OCPPCommCtrlr', variable: 'HeartbeatInterval', value: '300' }] },
  ],
  'get-local-list-version': [['ocpp1.6', 'ocpp2.0.1'], {}],
  'get-base-report': [['ocpp2.0.1'], { report_base: 'full' }],
  'data-transfer': [['ocpp1.6', 'ocpp2.0.1'], { vendor_id: 'com.example', message_id: 'ping' }],
  'update-firmware': [['ocpp1.6', 'ocpp2.0.1'], { location: 'https://firmware.example/1.0.bin' }],
  'upload-log': [['ocpp1.6', 'ocpp2.0.1'], { location: 'https://logs.example/upload', log_type: 'diagnostics' }],
  // a reservation for the next quarter of an hour (it was until 2030: one sent as shown held the
  // EVSE for years); the cancel names the charger's first reservation when it holds one
  reserve: [['ocpp1.6', 'ocpp2.0.1'], () => ({ id_tag: 'CARD-1', expiry_date: inMinutes(15), evse_id: 1 })],
  'cancel-reservation': [
    ['ocpp1.6', 'ocpp2.0.1'],
    (cp) => ({ reservation_id: cp.reservations?.[0]?.reservation_id ?? 1 }),
  ],
  'set-charging-profile': [
    ['ocpp1.6', 'ocpp2.0.1'],
    // absolute, from a start: OCPP 2.0.1 refuses a relative charger_max (K01.FR.38)
    {
      evse_id: 0,
      profile: {
        id: 1,
        stack_level: 0,
        purpose: 'charger_max',
        kind: 'absolute',
        schedule: { start: '2025-01-01T00:00:00Z', rate_unit: 'A', periods: [{ start_s: 0, limit: 16 }] },
      },
    },
  ],
  'clear-charging-profile': [['ocpp1.6', 'ocpp2.0.1'], { profile_id: 1 }],
  'get-composite-schedule': [['ocpp1.6', 'ocpp2.0.1'], { evse_id: 1, duration_s: 3600 }],
  'send-local-list': [
    ['ocpp1.6', 'ocpp2.0.1'],
    { update: 'differential', entries: [{ id_tag: 'CARD-1', status: 'Accepted' }] },
  ],
  'sync-local-list': [['ocpp1.6', 'ocpp2.0.1'], {}],
  // not operations but settings of the charge point, pushed to the charger (docs/CSMS.md)
  'boot-policy': [['ocpp1.6', 'ocpp2.0.1'], { policy: 'Accepted' }, 'PUT'],
  password: [['ocpp1.6', 'ocpp2.0.1'], { generate: true }, 'PUT'],
  // a pending password whose answer was lost: dropped, so that it may be rotated again
  'password/pending': [['ocpp1.6', 'ocpp2.0.1'], {}, 'DELETE'],
};

export const operationsFor = (protocol) => Object.keys(OPERATIONS).filter((n) => OPERATIONS[n][0].includes(protocol));

/**
 * The operations that only read or ask the charger to send something: the form opens on one, and
 * they go at the first Run. Every other one changes the charger and is asked twice (the form
 * opened on change-availability Inoperative, and one Run took an EVSE out of service).
 */
const READS = [
  'get-configuration',
  'get-variables',
  'get-local-list-version',
  'get-base-report',
  'get-composite-schedule',
  'trigger',
];
export const changesCharger = (name) => !READS.includes(name);
/** the one the form opens on: the first of READS (the charger's configuration) the version has */
export const firstRead = (names) => READS.find((n) => names.includes(n)) ?? names[0];

/** The example body of operation `name` for the charger `cp`, as the form's JSON. */
export const exampleOf = (name, cp) => {
  const example = OPERATIONS[name][1];
  return JSON.stringify(typeof example === 'function' ? example(cp) : example);
};

const inMinutes = (m) => new Date(Date.now() + m * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');

/** Whether the charger's answer is a success (green) or not (red). */
// `stored`: a password forced in at once, the charger sent nothing
export const accepted = (status) => ['Accepted', 'Unlocked', 'Scheduled', 'RebootRequired', 'stored'].includes(status);
