-- Renewal of custom-domain certificates. One instance orders a domain's certificate at a time: it claims the row
-- (claimed_until, a lease longer than an order may take) and clears the claim when the order ends. After a failed
-- renewal the next try waits (retry_at), longer after each consecutive failure (failures).
ALTER TABLE service_domain_certificates
    ADD COLUMN claimed_until      timestamptz,
    ADD COLUMN failures           integer NOT NULL DEFAULT 0,
    ADD COLUMN retry_at           timestamptz;

CREATE INDEX service_domain_certificates_expiry ON service_domain_certificates (expires_at) WHERE chain_pem IS NOT NULL;
