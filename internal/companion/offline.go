package companion

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/labels"
)

// Offline is the deterministic analyst of every phase, with no network: a
// lexical baseline, labelled as such in the context and the report, never
// passed off as a model's judgment. Now is the clock for the years of a
// current job (nil: time.Now, through the audit scope when there is one).
type Offline struct {
	Now func() time.Time
}

var _ Analyst = Offline{}

// OfflineVersion versions the offline rules; it is part of the input hash.
const OfflineVersion = "offline@1"

// BaselineLabel prefixes every justification the offline analyst writes.
const BaselineLabel = "[línea base offline]"

// Info names the offline analyst.
func (Offline) Info() AnalystInfo {
	return AnalystInfo{Provider: "offline", Model: OfflineVersion, SmallModel: OfflineVersion, Baseline: true, ClassifierVersion: OfflineVersion}
}

// Intent accepts a text with at least MinCareerSignals distinct career
// words and no instruction to the assistant.
func (Offline) Intent(ctx context.Context, jd string) (IntentVerdict, veredicto.Usage, error) {
	if err := ctx.Err(); err != nil {
		return IntentVerdict{}, veredicto.Usage{}, err
	}
	if m := DetectInjection(jd); m != "" {
		return IntentVerdict{IsCareerTask: false, InjectionDetected: true, Reason: "el texto contiene instrucciones dirigidas al asistente"}, veredicto.Usage{}, nil
	}
	if n := CareerSignals(jd); n < MinCareerSignals {
		return IntentVerdict{Reason: fmt.Sprintf("el texto no parece una oferta de empleo (%d señales de carrera; se necesitan %d)", n, MinCareerSignals)}, veredicto.Usage{}, nil
	}
	return IntentVerdict{IsCareerTask: true, Reason: "oferta de empleo"}, veredicto.Usage{}, nil
}

var techNames = []string{
	"Go", "Golang", "Python", "Java", "Kotlin", "Scala", "Rust", "C#", ".NET", "PHP", "Ruby", "JavaScript", "TypeScript",
	"Node.js", "React", "Angular", "Vue", "AWS", "GCP", "Azure", "Lambda", "SQS", "SNS", "DynamoDB", "S3", "Kubernetes",
	"Docker", "Terraform", "Kafka", "RabbitMQ", "PostgreSQL", "MySQL", "MongoDB", "Redis", "Elasticsearch", "GraphQL",
	"COBOL", "Mainframe", "jQuery", "Spark", "Airflow", "dbt", "Snowflake", "LLM", "Machine Learning",
}

var (
	legacyRE  = regexp.MustCompile(`(?i)\b(cobol|mainframe|jquery|monolito|legacy|php|as/?400|visual basic)\b`)
	modernRE  = regexp.MustCompile(`(?i)\b(go|golang|kubernetes|aws|lambda|serverless|microservicios|eventos|terraform|react|typescript|kafka)\b`)
	cuttingRE = regexp.MustCompile(`(?i)\b(llms?|ia generativa|generative ai|rust|machine learning|webassembly|agentes de ia)\b`)
	painRE    = regexp.MustCompile(`(?i)\b(reducir|migra\w*|mejorar|problema\w*|necesitamos|desaf[ií]o\w*|escala\w*|deuda|incidentes|reclamos|lent\w+|tardan)\b`)
	cultureRE = regexp.MustCompile(`(?i)\b(valora\w*|cultura|autonom[ií]a|transparencia|ownership|colabora\w*|aprendizaje|diversidad|feedback|confianza|prop[oó]sito)\b`)
	redFlagRE = regexp.MustCompile(`(?i)(alta presi[oó]n|24/7|horario extendido|fines de semana|rockstar|ninja|como una familia|sin horario|multitarea|tolerancia a la frustraci[oó]n|urgente)`)
	peopleRE  = regexp.MustCompile(`(?i)(\d[\d.]*)\s*(personas|empleados|colaboradores|trabajadores|employees)`)
	sentSplit = regexp.MustCompile(`[.!?\n]+`)
)

// sentences splits text into sentences, joining the lines of a wrapped
// paragraph first (a heading, a bullet or a blank line ends a paragraph).
func sentences(text string) []string {
	var paras []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			paras = append(paras, strings.Join(cur, " "))
			cur = nil
		}
	}
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || headingRE.MatchString(line) || bulletRE.MatchString(line) {
			flush()
			if t != "" {
				paras = append(paras, t)
			}
			continue
		}
		cur = append(cur, t)
	}
	flush()
	var out []string
	for _, s := range sentSplit.Split(strings.Join(paras, "\n"), -1) {
		s = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(s), "-*•#"))
		if len([]rune(s)) >= 12 {
			out = append(out, s)
		}
	}
	return out
}

// CultureRadar reads the JD's tech stack, maturity, pain points, culture
// signals, red flags and size from fixed lexicons.
func (Offline) CultureRadar(ctx context.Context, in CultureInput) (CultureRadar, veredicto.Usage, error) {
	if err := ctx.Err(); err != nil {
		return CultureRadar{}, veredicto.Usage{}, err
	}
	r := CultureRadar{TechStackDetected: []string{}, CultureSignals: []string{}, RedFlags: []string{}, PainPoints: []string{}}
	for _, t := range techNames {
		if wordIn(in.JD, t) {
			r.TechStackDetected = append(r.TechStackDetected, t)
		}
	}
	legacy, modern, cutting := legacyRE.MatchString(in.JD), modernRE.MatchString(in.JD), cuttingRE.MatchString(in.JD)
	switch {
	case cutting:
		r.TechMaturity = "cutting_edge"
	case legacy && modern:
		r.TechMaturity = "mixed"
	case legacy:
		r.TechMaturity = "legacy"
	default:
		r.TechMaturity = "modern"
	}
	for _, s := range sentences(in.JD) {
		if painRE.MatchString(s) && len(r.PainPoints) < 3 {
			r.PainPoints = append(r.PainPoints, s)
		}
		if cultureRE.MatchString(s) && len(r.CultureSignals) < 5 {
			r.CultureSignals = append(r.CultureSignals, s)
		}
		if m := redFlagRE.FindString(s); m != "" && len(r.RedFlags) < 5 {
			r.RedFlags = append(r.RedFlags, s)
		}
	}
	if len(r.PainPoints) == 0 {
		r.PainPoints = []string{"La oferta no explicita el problema que el rol busca resolver."}
	}
	r.CompanySizeSignal = "unknown"
	low := strings.ToLower(in.JD)
	switch {
	case strings.Contains(low, "multinacional") || strings.Contains(low, "corporación") || strings.Contains(low, "enterprise"):
		r.CompanySizeSignal = "enterprise"
	case strings.Contains(low, "startup"):
		r.CompanySizeSignal = "startup"
	}
	if m := peopleRE.FindStringSubmatch(in.JD); m != nil {
		n, _ := strconv.Atoi(strings.ReplaceAll(m[1], ".", ""))
		switch {
		case n < 50:
			r.CompanySizeSignal = "startup"
		case n < 1000:
			r.CompanySizeSignal = "mid"
		default:
			r.CompanySizeSignal = "enterprise"
		}
	}
	return r, veredicto.Usage{}, nil
}

var (
	hardRE      = regexp.MustCompile(`(?i)\b(excluyente|indispensable|imprescindible|obligatori[oa]|requisito m[ií]nimo|must)\b`)
	inflatedRE  = regexp.MustCompile(`(?i)\b(idealmente|ideal|plus|valorable|nice to have|bonus|se valorar[aá])\b`)
	desiredHead = regexp.MustCompile(`(?i)deseabl|valorab|plus|nice|ideal|suma`)
	desiredText = regexp.MustCompile(`(?i)\b(deseable|valorable|se valora\pL*|suma)\b`)
	yearsRE     = regexp.MustCompile(`(\d{1,2})\s*\+?\s*años`)
)

// wordIn reports whether word occurs in text as a whole word,
// case-insensitively.
func wordIn(text, word string) bool {
	if re, ok := wordREs.Load(word); ok {
		return re.(*regexp.Regexp).MatchString(text)
	}
	re := regexp.MustCompile(`(?i)(^|[^\pL\pN])` + regexp.QuoteMeta(word) + `($|[^\pL\pN])`)
	if wordREsN.Add(1) <= maxWordREs {
		wordREs.Store(word, re)
	}
	return re.MatchString(text)
}

const maxWordREs = 4096

var wordREsN atomic.Int64

// wordREs caches wordIn's patterns by word. The words are the fixed
// technology names and a profile's skill names: bounded by maxWordREs,
// past which patterns are compiled per call.
var wordREs sync.Map

var stop = map[string]bool{"experiencia": true, "conocimientos": true, "desarrollo": true, "trabajo": true, "equipo": true, "sistemas": true, "personas": true, "sobre": true, "entre": true, "desde": true, "donde": true, "hacia": true, "tiempo": true}

// stems are the text's content words (five letters or more, not in stop),
// cut to their first six letters so "pagos" meets "pago" no more than
// exact words would but "conciliación" meets "conciliaciones".
func stems(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("áéíóúñü", r))
	}) {
		if len([]rune(w)) < 5 || stop[w] {
			continue
		}
		r := []rune(w)
		if len(r) > 6 {
			r = r[:6]
		}
		out[string(r)] = true
	}
	return out
}

func overlap(a, b map[string]bool) int {
	n := 0
	for k := range a {
		if b[k] {
			n++
		}
	}
	return n
}

// clock is the time the career's years are counted at (Now, else the
// time), recorded in the audit scope ctx carries; a replay reads it back.
func (o Offline) clock(ctx context.Context) (time.Time, error) {
	sc := audit.ScopeFrom(ctx)
	switch {
	case o.Now == nil:
		return audit.Now(ctx, clockOfflineYears)
	case sc == nil:
		return o.Now(), nil
	case sc.Replay != nil:
		return sc.Now(ctx, clockOfflineYears)
	}
	at := o.Now()
	if _, err := sc.Recorder.Append(ctx, sc.Chain, audit.KindClock, audit.Clock{Use: clockOfflineYears, At: at}); err != nil {
		return at, fmt.Errorf("audit clock: %w", err)
	}
	return at, nil
}

func careerYears(p ProfileSnapshot, now time.Time) float64 {
	months := 0
	for _, w := range p.WorkExperiences {
		s, err := time.Parse("2006-01", w.Start)
		if err != nil {
			continue
		}
		e := now
		if w.End != "" {
			if t, err := time.Parse("2006-01", w.End); err == nil {
				e = t
			}
		}
		months += (e.Year()-s.Year())*12 + int(e.Month()-s.Month())
	}
	return float64(months) / 12
}

// Classify types each requirement by its wording and section (A when it
// says it is excluding, D when it is an "ideally/plus" wish, C in a
// desirable section or saying it is desirable, B otherwise) and matches it
// against the profile. A JD without a list (Extract) is split into its
// sentences and the ones that ask something of the candidate are its
// requirements (RequirementsFromText).
// a profile skill named in it is cumple (parcial when the requirement asks
// more years than the skill has); "N años" of experience compares the
// career's years; otherwise two shared content words with the experience
// make it transferible. A strength is linked to the requirements and pain
// points it shares a content word with.
func (o Offline) Classify(ctx context.Context, in ClassifyInput) (Classification, veredicto.Usage, error) {
	if err := ctx.Err(); err != nil {
		return Classification{}, veredicto.Usage{}, err
	}
	var expText strings.Builder
	for _, w := range in.Profile.WorkExperiences {
		fmt.Fprintf(&expText, "%s %s\n", w.Role, w.Company)
		for _, a := range w.Achievements {
			fmt.Fprintf(&expText, "%s %s\n", a.Description, a.Metric)
		}
	}
	for _, p := range in.Profile.Projects {
		fmt.Fprintf(&expText, "%s %s %s\n", p.Name, p.Description, strings.Join(p.Skills, " "))
	}
	expStems := stems(expText.String())
	now, err := o.clock(ctx)
	if err != nil {
		return Classification{}, veredicto.Usage{}, err
	}
	years := careerYears(in.Profile, now)
	out := Classification{StrengthLinks: []StrengthLink{}}
	if in.Extract {
		in.Requirements = RequirementsFromText(in.JD)
		if len(in.Requirements) == 0 {
			return out, veredicto.Usage{}, fmt.Errorf("offline classify: the job description has no sentence that reads as a requirement")
		}
	}
	for _, r := range in.Requirements {
		c := ClassifiedRequirement{Requirement: r.Text}
		switch {
		case hardRE.MatchString(r.Text):
			c.Type, c.TypeJustification = TypeA, BaselineLabel+" el requisito se declara excluyente"
		case inflatedRE.MatchString(r.Text) || (desiredHead.MatchString(r.Section) && inflatedRE.MatchString(r.Section)):
			c.Type, c.TypeJustification = TypeD, BaselineLabel+" deseable formulado como ideal o plus"
		case desiredHead.MatchString(r.Section):
			c.Type, c.TypeJustification = TypeC, BaselineLabel+" listado en la sección de deseables"
		case desiredText.MatchString(r.Text):
			c.Type, c.TypeJustification = TypeC, BaselineLabel+" la oferta lo declara deseable"
		default:
			c.Type, c.TypeJustification = TypeB, BaselineLabel+" listado como requisito"
		}
		var skill *Skill
		for i := range in.Profile.Skills {
			if wordIn(r.Text, in.Profile.Skills[i].Name) {
				skill = &in.Profile.Skills[i]
				break
			}
		}
		need := 0.0
		if m := yearsRE.FindStringSubmatch(r.Text); m != nil {
			need, _ = strconv.ParseFloat(m[1], 64)
		}
		switch {
		case skill != nil && skill.Years >= need:
			c.Match, c.MatchJustification = MatchCumple, fmt.Sprintf("%s skill %s (%s, %g años)", BaselineLabel, skill.Name, skill.Level, skill.Years)
		case skill != nil:
			c.Match, c.MatchJustification = MatchParcial, fmt.Sprintf("%s skill %s con %g años de %g pedidos", BaselineLabel, skill.Name, skill.Years, need)
		case need > 0 && years >= need:
			c.Match, c.MatchJustification = MatchCumple, fmt.Sprintf("%s %.0f años de experiencia laboral registrada", BaselineLabel, years)
		case need > 0:
			c.Match, c.MatchJustification = MatchParcial, fmt.Sprintf("%s %.0f años de experiencia laboral de %g pedidos", BaselineLabel, years, need)
		case overlap(stems(r.Text), expStems) >= 2:
			c.Match, c.MatchJustification = MatchTransferible, BaselineLabel+" experiencia relacionada en el perfil, sin el skill exacto"
		default:
			c.Match, c.MatchJustification = MatchNoCumple, BaselineLabel+" sin evidencia en el perfil"
		}
		c.Score, _ = NewEngine(DefaultConfig()).MatchScore(c.Match)
		out.Requirements = append(out.Requirements, c)
	}
	targets := append([]string{}, in.PainPoints...)
	for _, r := range in.Requirements {
		targets = append(targets, r.Text)
	}
	for _, s := range in.Profile.ProfessionalStrengths {
		ss := stems(s.Name)
		for _, t := range targets {
			if overlap(ss, stems(t)) > 0 {
				ev := s.Evidence
				if strings.TrimSpace(ev) == "" {
					ev = "fortaleza declarada en el perfil"
				}
				out.StrengthLinks = append(out.StrengthLinks, StrengthLink{Strength: s.Name, Target: t, Evidence: BaselineLabel + " " + ev})
				break
			}
		}
	}
	return out, veredicto.Usage{}, nil
}

// bucket turns a count of new technologies into 0/5/10/15/20.
func bucket(n int) int {
	if n > 4 {
		n = 4
	}
	return n * 5
}

// shareScore turns n of total profile items into 0/5/10/15/20 by their
// share, to the nearest quarter: 2 of 2 is 20, 1 of 2 is 10, 1 of 3 is 5,
// 2 of 3 is 15; a profile that declares none scores 0.
func shareScore(n, total int) int {
	if total == 0 {
		return 0
	}
	return int(math.Round(4*float64(n)/float64(total))) * 5
}

// SAS scores each dimension by the share of the profile's goals,
// motivations and values the JD shares, the new technologies the role
// would teach, and the fit of autonomy, work mode and role type.
func (Offline) SAS(ctx context.Context, in SASInput) (SASDimensionEvaluation, veredicto.Usage, error) {
	if err := ctx.Err(); err != nil {
		return SASDimensionEvaluation{}, veredicto.Usage{}, err
	}
	jd := stems(in.JD)
	dim := func(items []string, what string) SASDimensionScore {
		n := 0
		for _, it := range items {
			if overlap(stems(it), jd) > 0 {
				n++
			}
		}
		if len(items) == 0 {
			return SASDimensionScore{Score: 0, Justification: fmt.Sprintf("%s el perfil no declara %s", BaselineLabel, what)}
		}
		return SASDimensionScore{Score: shareScore(n, len(items)), Justification: fmt.Sprintf("%s %d de %d %s aparecen en la oferta (%.0f %%)", BaselineLabel, n, len(items), what, 100*float64(n)/float64(len(items)))}
	}
	ev := SASDimensionEvaluation{
		CareerGoals:          dim(in.Profile.Goals, "metas"),
		IntrinsicMotivations: dim(in.Profile.Motivations, "motivaciones"),
		ValuesCulture:        dim(in.Profile.Values, "valores"),
	}
	known := map[string]bool{}
	for _, s := range in.Profile.Skills {
		known[strings.ToLower(s.Name)] = true
	}
	var learn []string
	for _, t := range in.Radar.TechStackDetected {
		if !known[strings.ToLower(t)] {
			learn = append(learn, t)
		}
	}
	sort.Strings(learn)
	g := bucket(len(learn))
	if in.Radar.TechMaturity == "legacy" && g > 0 {
		g -= 5
	}
	ev.TechGrowth = SASDimensionScore{Score: g, Justification: fmt.Sprintf("%s tecnologías nuevas para el perfil: %d (%s), madurez %s", BaselineLabel, len(learn), strings.Join(learn, ", "), labels.Of(labels.TechMaturity, in.Radar.TechMaturity))}
	a, why := 0, []string{}
	if in.Profile.Preferences.Autonomy == "alta" && (jd["autono"] || jd["owners"]) || in.Profile.Preferences.Autonomy != "alta" && in.Profile.Preferences.Autonomy != "" {
		a += 10
		why = append(why, "autonomía acorde")
	}
	f := ExtractFacts(in.JD, nil)
	if mode := in.Profile.Preferences.WorkMode; mode != "" && f.WorkMode == mode {
		a += 5
		why = append(why, "modalidad "+mode)
	}
	if overlap(stems(in.Profile.Preferences.RoleType), jd) > 0 {
		a += 5
		why = append(why, "tipo de rol")
	}
	ev.AutonomyRole = SASDimensionScore{Score: a, Justification: fmt.Sprintf("%s %s", BaselineLabel, strings.Join(append(why, fmt.Sprintf("%d puntos", a)), "; "))}
	return ev, veredicto.Usage{}, nil
}

// Summary composes the headline, the pillars, the linked strengths and the
// ethos, in the profile's own words.
func (Offline) Summary(ctx context.Context, in DraftInput) (Summary, veredicto.Usage, error) {
	if err := ctx.Err(); err != nil {
		return Summary{}, veredicto.Usage{}, err
	}
	var parts []string
	if h := strings.TrimSpace(in.Profile.Headline); h != "" {
		parts = append(parts, strings.TrimSuffix(h, ".")+".")
	}
	if len(in.Profile.Pillars) > 0 {
		parts = append(parts, "Posicionamiento: "+strings.Join(in.Profile.Pillars, " · ")+".")
	}
	strengths := in.Scoring.Confidence.MVP.LinkedStrengths
	if len(strengths) == 0 {
		for i, s := range in.Profile.ProfessionalStrengths {
			if i == 2 {
				break
			}
			strengths = append(strengths, s.Name)
		}
	}
	if len(strengths) > 0 {
		parts = append(parts, "Fortalezas para este rol: "+strings.Join(strengths, ", ")+".")
	}
	if e := strings.TrimSpace(in.Profile.Ethos); e != "" {
		parts = append(parts, strings.TrimSuffix(e, ".")+".")
	}
	s := Summary{KillerSummary: strings.Join(parts, "\n")}
	if r := []rune(s.KillerSummary); len(r) > MaxSummaryChars {
		s.KillerSummary = string(r[:MaxSummaryChars])
	}
	return s, veredicto.Usage{}, nil
}

// Bullets turns each verified achievement into a bullet in its own words
// and metric, at most four per experience or project.
func (Offline) Bullets(ctx context.Context, in DraftInput) (BulletSet, veredicto.Usage, error) {
	if err := ctx.Err(); err != nil {
		return BulletSet{}, veredicto.Usage{}, err
	}
	var out BulletSet
	add := func(id string, achs []Achievement) {
		n := 0
		for _, a := range achs {
			if !a.Verified || n == 4 {
				continue
			}
			text := strings.TrimSuffix(strings.TrimSpace(a.Description), ".")
			if m := strings.TrimSpace(a.Metric); m != "" {
				text += ": " + strings.TrimSuffix(m, ".")
			}
			out.Bullets = append(out.Bullets, Bullet{ExperienceID: id, AchievementIDs: []string{a.ID}, Text: text + "."})
			n++
		}
	}
	for _, w := range in.Profile.WorkExperiences {
		add(w.ID, w.Achievements)
	}
	for _, p := range in.Profile.Projects {
		add(p.ID, p.Achievements)
	}
	if len(out.Bullets) == 0 {
		return out, veredicto.Usage{}, fmt.Errorf("offline bullets: the profile has no verified achievement to build a bullet from")
	}
	return out, veredicto.Usage{}, nil
}

// SkillsMatrix lists the profile skills a requirement names, with the
// requirements they answer.
func (Offline) SkillsMatrix(ctx context.Context, in DraftInput) (SkillsMatrix, veredicto.Usage, error) {
	if err := ctx.Err(); err != nil {
		return SkillsMatrix{}, veredicto.Usage{}, err
	}
	out := SkillsMatrix{Skills: []SkillMatrixEntry{}}
	for _, s := range in.Profile.Skills {
		var rel []string
		for _, r := range in.Requirements {
			if wordIn(r.Requirement, s.Name) {
				rel = append(rel, r.Requirement)
			}
		}
		if len(rel) > 0 {
			out.Skills = append(out.Skills, SkillMatrixEntry{Skill: s.Name, Level: s.Level, Years: s.Years, RelevantTo: rel})
		}
	}
	return out, veredicto.Usage{}, nil
}
