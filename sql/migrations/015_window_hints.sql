-- The browser window's outer size the beacon reports (the beacon's
-- hints): headless Chromium and Firefox report 0 × 0, or Chromium a
-- window larger than its 800 × 600 screen, whatever their user agent says.
-- Kept with the other hints so a revalidation can judge them again.
-- window_reported is false for the pixel and for trackers from before.
ALTER TABLE views_raw
    ADD COLUMN IF NOT EXISTS window_reported Bool   DEFAULT false,
    ADD COLUMN IF NOT EXISTS window_w        UInt16 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS window_h        UInt16 DEFAULT 0;
