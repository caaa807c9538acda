-- Additives with one E-number are named by it, as in Open Food Facts' ingredient taxonomy
-- ("sodium-nitrite" becomes "e250"). Rewrites the slugs stored in products.substances; other
-- entries are kept as they are.
CREATE TEMPORARY TABLE substance_renames (old text PRIMARY KEY, new text NOT NULL);--> statement-breakpoint
INSERT INTO substance_renames VALUES
  ('lysozyme', 'e1105'),
  ('sodium-nitrite', 'e250'),
  ('potassium-nitrite', 'e249'),
  ('lactic-acid', 'e270'),
  ('lecithin', 'e322'),
  ('gelatin', 'e441'),
  ('aspartame', 'e951'),
  ('sucralose', 'e955'),
  ('acesulfame-k', 'e950'),
  ('saccharin', 'e954'),
  ('steviol-glycosides', 'e960'),
  ('sorbitol', 'e420'),
  ('glycerol', 'e422'),
  ('maltitol', 'e965'),
  ('xylitol', 'e967'),
  ('erythritol', 'e968'),
  ('sodium-benzoate', 'e211'),
  ('benzoic-acid', 'e210'),
  ('potassium-sorbate', 'e202'),
  ('sorbic-acid', 'e200'),
  ('citric-acid', 'e330'),
  ('ascorbic-acid', 'e300'),
  ('sodium-ascorbate', 'e301'),
  ('ascorbyl-palmitate', 'e304'),
  ('sodium-erythorbate', 'e316'),
  ('malic-acid', 'e296'),
  ('fumaric-acid', 'e297'),
  ('calcium-chloride', 'e509'),
  ('potassium-chloride', 'e508'),
  ('glucono-delta-lactone', 'e575'),
  ('edta', 'e385'),
  ('bha', 'e320'),
  ('bht', 'e321'),
  ('tbhq', 'e319'),
  ('propyl-gallate', 'e310'),
  ('carrageenan', 'e407'),
  ('xanthan-gum', 'e415'),
  ('guar-gum', 'e412'),
  ('gum-arabic', 'e414'),
  ('locust-bean-gum', 'e410'),
  ('gellan-gum', 'e418'),
  ('pectin', 'e440'),
  ('agar', 'e406'),
  ('alginate', 'e401'),
  ('polysorbate', 'e433'),
  ('ferrous-gluconate', 'e579'),
  ('sodium-bicarbonate', 'e500'),
  ('calcium-carbonate', 'e170'),
  ('monosodium-glutamate', 'e621'),
  ('beta-carotene', 'e160a'),
  ('annatto', 'e160b'),
  ('paprika-extract', 'e160c'),
  ('lutein', 'e161b'),
  ('anthocyanins', 'e163'),
  ('carmine', 'e120'),
  ('allura-red', 'e129'),
  ('tartrazine', 'e102'),
  ('sunset-yellow', 'e110'),
  ('brilliant-blue', 'e133'),
  ('titanium-dioxide', 'e171'),
  ('turmeric', 'e100'),
  ('riboflavin', 'e101');--> statement-breakpoint
UPDATE "products" p SET "substances" = (
  SELECT coalesce(jsonb_agg(CASE WHEN r.new IS NULL THEN e ELSE jsonb_set(e, '{slug}', to_jsonb(r.new)) END ORDER BY i), '[]'::jsonb)
  FROM jsonb_array_elements(p."substances") WITH ORDINALITY AS x(e, i)
  LEFT JOIN substance_renames r ON r.old = e->>'slug'
)
WHERE EXISTS (
  SELECT 1 FROM jsonb_array_elements(p."substances") e JOIN substance_renames r ON r.old = e->>'slug'
);--> statement-breakpoint
DROP TABLE substance_renames;
