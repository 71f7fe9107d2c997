-- Retry policies (JSON) take the API's camelCase field names.
UPDATE `agents` SET `retry` = json_object(
	'maxAttempts', json_extract(`retry`, '$.max_attempts'),
	'exitCodes', json(coalesce(json_extract(`retry`, '$.exit_codes'), '[]')),
	'outputPatterns', json(coalesce(json_extract(`retry`, '$.output_patterns'), '[]')),
	'backoffS', json_extract(`retry`, '$.backoff_s')
) WHERE json_extract(`retry`, '$.max_attempts') IS NOT NULL;
--> statement-breakpoint
UPDATE `jobs` SET `retry` = json_object(
	'maxAttempts', json_extract(`retry`, '$.max_attempts'),
	'exitCodes', json(coalesce(json_extract(`retry`, '$.exit_codes'), '[]')),
	'outputPatterns', json(coalesce(json_extract(`retry`, '$.output_patterns'), '[]')),
	'backoffS', json_extract(`retry`, '$.backoff_s')
) WHERE json_extract(`retry`, '$.max_attempts') IS NOT NULL;
