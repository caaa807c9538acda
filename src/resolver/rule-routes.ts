import { Elysia, t } from 'elysia'
import { transaction } from '../db/tx'
import { auth } from '../http/auth'
import { errorResponses } from '../http/openapi'
import { parseId } from '../shared/ids'
import { Page } from '../shared/pagination'
import { ruleIndex } from './rule-index'
import { createRule, deleteRule, getRule, listRules, updateRule } from './rules'
import { Rule, RuleCreate, RuleParams, RulePatch, RuleQuery, RulesParams } from './schemas'

const tags = ['Resolver']
const FORMATS =
  'Formats: `link_type` a GS1 Web Vocabulary link type in CURIE form (default gs1:defaultLink); `annual_*_mmdd` MM-DD with a day that exists (set both or neither; the window may wrap the new year, both ends inclusive); `time_of_day_*` HH:MM 24-hour (both or neither; end exclusive; may wrap midnight); `days_of_week` ISO 1 (Monday) to 7; `timezone` an IANA name (default UTC), in which days, dates and times are read; `absolute_start_at` before `absolute_end_at` (end exclusive); `location_countries` ISO 3166-1 alpha-2, `location_regions` ISO 3166-2 (US-CA); `custom_url` an absolute http(s) URL. Scope: ORGANIZATION needs nothing more; BRAND a `scope_id` naming a brand of the organization; PRODUCT a `product_id` of a product the organization holds; BATCH and SERIAL that `product_id` and the lot or serial in `scope_id`. A wrong value is 422 naming the field. Emits `resolution_rule.created|updated|deleted`; the resolver applies a change within moments, in every process.'

/** Applies a committed change to this process's index at once (other processes hear of it through events). */
const applied = async <T>(id: string, result: T) => {
  await ruleIndex.reloadRule(id)
  return result
}

export const ruleRoutes = new Elysia({ name: 'resolution-rules', prefix: '/resolver/api/v1/organizations' })
  .use(auth)
  .get(
    '/:organization_id/resolution-rules',
    ({ apiKey, query }) =>
      listRules(
        apiKey.organizationId,
        { scope_type: query.scope_type, enabled: query.enabled === undefined ? undefined : query.enabled === 'true' },
        query,
      ),
    {
      auth: { role: 'readonly', org: 'organization_id' },
      params: RulesParams,
      query: RuleQuery,
      response: { 200: Page(Rule), ...errorResponses },
      detail: {
        tags,
        summary: 'List resolution rules',
        description:
          "The organization's rules, oldest first. `scope_type` narrows to one scope; `enabled` true returns only active rules, false only disabled ones. Any role (VIEW).",
      },
    },
  )
  .post(
    '/:organization_id/resolution-rules',
    async ({ apiKey, body, status }) => {
      const rule = await transaction((tx) => createRule(tx, apiKey.organizationId, body))
      return status(201, await applied(parseId(rule.id)!, rule))
    },
    {
      auth: { role: 'editor', org: 'organization_id' },
      params: RulesParams,
      body: RuleCreate,
      response: { 201: Rule, ...errorResponses },
      detail: { tags, summary: 'Create a resolution rule', description: FORMATS },
    },
  )
  .get(
    '/:organization_id/resolution-rules/:rule_id',
    ({ apiKey, params }) => getRule(apiKey.organizationId, params.rule_id),
    {
      auth: { role: 'readonly', org: 'organization_id' },
      params: RuleParams,
      response: { 200: Rule, ...errorResponses },
      detail: { tags, summary: 'Get a resolution rule', description: "Another organization's rule is 404." },
    },
  )
  .patch(
    '/:organization_id/resolution-rules/:rule_id',
    async ({ apiKey, params, body }) =>
      applied(params.rule_id, await transaction((tx) => updateRule(tx, apiKey.organizationId, params.rule_id, body))),
    {
      auth: { role: 'editor', org: 'organization_id' },
      params: RuleParams,
      body: RulePatch,
      response: { 200: Rule, ...errorResponses },
      detail: {
        tags,
        summary: 'Update a resolution rule',
        description: `Partial update: omitted fields are kept, \`null\` clears a nullable field, metadata merges. Changing \`scope_type\` needs the new scope's \`scope_id\`/\`product_id\`. The result is checked as a whole. ${FORMATS}`,
      },
    },
  )
  .delete(
    '/:organization_id/resolution-rules/:rule_id',
    async ({ apiKey, params, status }) => {
      await transaction((tx) => deleteRule(tx, apiKey.organizationId, params.rule_id))
      return status(204, await applied(params.rule_id, undefined))
    },
    {
      auth: { role: 'editor', org: 'organization_id' },
      params: RuleParams,
      response: { 204: t.Void(), ...errorResponses },
      detail: {
        tags,
        summary: 'Delete a resolution rule',
        description: 'Emits `resolution_rule.deleted` with the rule as it was.',
      },
    },
  )
