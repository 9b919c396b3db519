import type { ChargerEventOutcome } from '../ocpp/domain.js';

type Answer = NonNullable<ChargerEventOutcome['data_transfer']>;

/** What a vendor's handler is given: the charger, and its DataTransfer's messageId and data. */
export type DataTransferHandler = (
  chargePointId: string,
  request: { message_id: string | null; data: unknown },
) => Answer | Promise<Answer>;

/** How long a handler may take: it answers inside the charger's call. */
const HANDLER_DEADLINE_MS = 5_000;

/**
 * Vendor-specific DataTransfer from chargers (OCPP 1.6 section 4.3, 2.0.1 P01): a handler per
 * vendorId. A vendor with no handler is answered `UnknownVendorId`, as both versions specify; a
 * handler that throws or takes longer than 5 s answers `Rejected`. Every DataTransfer is also in
 * the charger's event log. Handlers are registered by the code that builds the platform
 * (`csmsModule({ dataTransfer })`, docs/CSMS.md "DataTransfer").
 */
export class DataTransferRegistry {
  private readonly handlers = new Map<string, DataTransferHandler>();

  register(vendorId: string, handler: DataTransferHandler): this {
    this.handlers.set(vendorId, handler);
    return this;
  }

  vendors(): string[] {
    return [...this.handlers.keys()].sort();
  }

  async answer(
    chargePointId: string,
    request: { vendor_id: string; message_id: string | null; data: unknown },
  ): Promise<Answer> {
    const handler = this.handlers.get(request.vendor_id);
    if (!handler) return { status: 'UnknownVendorId' };
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<Answer>((resolve) => {
      timer = setTimeout(() => resolve({ status: 'Rejected' }), HANDLER_DEADLINE_MS);
    });
    try {
      const answered = Promise.resolve(handler(chargePointId, { message_id: request.message_id, data: request.data }));
      return await Promise.race([answered, late]);
    } catch {
      return { status: 'Rejected' };
    } finally {
      clearTimeout(timer);
    }
  }
}
