// Controller of Webhook Request Log: `resend` delivers the attempt's request again, as a new delivery row with the
// same webhook-id (Standard Webhooks: a message sent again keeps its id), its own retries and a fresh signature.
import { Document, whitelist, type MethodCall } from 'doctype-service';

/** One attempt of a webhook delivery. */
export default class WebhookRequestLog extends Document {
  /** Sends this request again (POST, write permission): returns the name of the new row. */
  @whitelist({ methods: ['POST'] })
  async resend(_args: Record<string, unknown>, call: MethodCall): Promise<string> {
    const copy = await call.insert({ doctype: 'Webhook Request Log', message_id: this.message_id });
    return String(copy.name);
  }
}
