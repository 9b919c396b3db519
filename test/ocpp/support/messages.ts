/** Test-data builders for charger messages of both versions (valid by default; override to break). */

const now = (): string => new Date().toISOString();

export const v16 = {
  boot: (o: Record<string, unknown> = {}) => ({
    chargePointVendor: 'Alfen',
    chargePointModel: 'Eve Single',
    firmwareVersion: '4.1.0',
    ...o,
  }),
  status: (connectorId: number, status = 'Available', o: Record<string, unknown> = {}) => ({
    connectorId,
    errorCode: 'NoError',
    status,
    timestamp: now(),
    ...o,
  }),
  authorize: (idTag = 'TAG-0001') => ({ idTag }),
  start: (o: Partial<{ connectorId: number; idTag: string; meterStart: number; timestamp: string }> = {}) => ({
    connectorId: 1,
    idTag: 'TAG-0001',
    meterStart: 1000,
    timestamp: now(),
    ...o,
  }),
  stop: (transactionId: number, meterStop: number, o: Record<string, unknown> = {}) => ({
    transactionId,
    meterStop,
    timestamp: now(),
    reason: 'Remote',
    ...o,
  }),
  meterValues: (connectorId: number, transactionId: number | undefined, wh: number) => ({
    connectorId,
    ...(transactionId === undefined ? {} : { transactionId }),
    meterValue: [
      {
        timestamp: now(),
        sampledValue: [{ value: String(wh), measurand: 'Energy.Active.Import.Register', unit: 'Wh' }],
      },
    ],
  }),
};

const meterValue201 = (wh: number) => [
  {
    timestamp: now(),
    sampledValue: [{ value: wh, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh' } }],
  },
];

export const v201 = {
  boot: (o: Record<string, unknown> = {}) => ({
    chargingStation: { model: 'Terra AC', vendorName: 'ABB', firmwareVersion: '1.8.0' },
    reason: 'PowerUp',
    ...o,
  }),
  status: (evseId: number, connectorId: number, connectorStatus = 'Available') => ({
    timestamp: now(),
    connectorStatus,
    evseId,
    connectorId,
  }),
  authorize: (idToken = 'TAG-0001') => ({ idToken: { idToken, type: 'ISO14443' } }),
  transactionEvent: (o: {
    eventType: 'Started' | 'Updated' | 'Ended';
    transactionId: string;
    seqNo: number;
    wh?: number;
    idToken?: string;
    remoteStartId?: number;
    stoppedReason?: string;
    /** the EVSE (connector 1 of it); 1 unless set */
    evse?: number;
  }) => ({
    eventType: o.eventType,
    timestamp: now(),
    triggerReason:
      o.eventType === 'Started'
        ? o.remoteStartId !== undefined
          ? 'RemoteStart'
          : 'Authorized'
        : o.eventType === 'Ended'
          ? 'RemoteStop'
          : 'MeterValuePeriodic',
    seqNo: o.seqNo,
    transactionInfo: {
      transactionId: o.transactionId,
      ...(o.remoteStartId !== undefined ? { remoteStartId: o.remoteStartId } : {}),
      ...(o.stoppedReason ? { stoppedReason: o.stoppedReason } : {}),
    },
    ...(o.idToken ? { idToken: { idToken: o.idToken, type: 'ISO14443' } } : {}),
    evse: { id: o.evse ?? 1, connectorId: 1 },
    ...(o.wh !== undefined ? { meterValue: meterValue201(o.wh) } : {}),
  }),
  meterValues: (evseId: number, wh: number) => ({ evseId, meterValue: meterValue201(wh) }),
  reservationStatusUpdate: (reservationId: number, reservationUpdateStatus = 'Expired') => ({
    reservationId,
    reservationUpdateStatus,
  }),
};
