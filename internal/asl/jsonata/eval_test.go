package jsonata

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// order is the sample document of these tests, in the spirit of the
// documentation's examples (an invoice with products).
const order = `{
  "id": "o-1",
  "customer": {"first": "Grace", "last": "Hopper", "phones": [{"type": "home", "n": "555-1"}, {"type": "mobile", "n": "555-2"}]},
  "lines": [
    {"product": "Hat", "price": 34.45, "qty": 2, "colours": ["red", "blue"]},
    {"product": "Scarf", "price": 21.99, "qty": 1, "colours": ["green"]},
    {"product": "Gloves", "price": 9.5, "qty": 3}
  ],
  "paid": false,
  "note": null
}`

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad test JSON %q: %v", s, err)
	}
	return v
}

type evalCase struct {
	expr string
	want string // JSON of the expected result; "undefined" for Undefined
}

func runCases(t *testing.T, input string, bindings map[string]any, cases []evalCase) {
	t.Helper()
	in := mustJSON(t, input)
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			e, err := Compile(c.expr)
			if err != nil {
				t.Fatalf("Compile(%q): %v", c.expr, err)
			}
			got, err := e.Eval(context.Background(), in, bindings)
			if err != nil {
				t.Fatalf("Eval(%q): %v", c.expr, err)
			}
			if c.want == "undefined" {
				if !IsUndefined(got) {
					t.Errorf("Eval(%q) = %#v, want undefined", c.expr, got)
				}
				return
			}
			want := mustJSON(t, c.want)
			if !reflect.DeepEqual(got, want) {
				gb, _ := json.Marshal(got)
				t.Errorf("Eval(%q) = %s, want %s", c.expr, gb, c.want)
			}
		})
	}
}

func TestPaths(t *testing.T) {
	runCases(t, order, nil, []evalCase{
		{`customer.first`, `"Grace"`},
		{`customer.phones.n`, `["555-1","555-2"]`},
		{`customer.phones[0].n`, `"555-1"`},
		{`customer.phones[-1].type`, `"mobile"`},
		{`customer.phones[type="mobile"].n`, `"555-2"`},
		{`lines.colours`, `["red","blue","green"]`},
		{`lines[0].colours`, `["red","blue"]`},
		{`lines.colours[0]`, `["red","green"]`},
		{`(lines.colours)[0]`, `"red"`},
		{`lines[price > 20].product`, `["Hat","Scarf"]`},
		{`lines[[0,2]].product`, `["Hat","Gloves"]`},
		{`lines[1].product[]`, `["Scarf"]`},
		{`nothing.here`, `undefined`},
		{`note`, `null`},
		{`customer.*`, `["Grace","Hopper",{"type":"home","n":"555-1"},{"type":"mobile","n":"555-2"}]`},
		{`**.n`, `["555-1","555-2"]`},
		{`$.id`, `"o-1"`},
		{`lines.($$.id & "/" & product)`, `["o-1/Hat","o-1/Scarf","o-1/Gloves"]`},
		{"customer.`first`", `"Grace"`},
	})
}

func TestOperators(t *testing.T) {
	runCases(t, order, nil, []evalCase{
		{`1 + 2 * 3`, `7`},
		{`(1 + 2) * 3`, `9`},
		{`7 % 4`, `3`},
		{`-lines[0].qty`, `-2`},
		{`lines[0].price * lines[0].qty`, `68.9`},
		{`missing + 1`, `undefined`},
		{`"a" & 1 & true`, `"a1true"`},
		{`missing & "x"`, `"x"`},
		{`1 = 1.0`, `true`},
		{`[1, {"a": [2]}] = [1, {"a": [2]}]`, `true`},
		{`"b" > "a"`, `true`},
		{`missing = 1`, `false`},
		{`missing < 1`, `undefined`},
		{`"red" in lines.colours`, `true`},
		{`paid or lines[0].qty > 1`, `true`},
		{`paid and $error("not evaluated")`, `false`},
		{`[1..4]`, `[1,2,3,4]`},
		{`[0, 2..3]`, `[0,2,3]`},
		{`paid ? "yes" : "no"`, `"no"`},
		{`paid ? "yes"`, `undefined`},
	})
}

func TestConstructors(t *testing.T) {
	runCases(t, order, nil, []evalCase{
		{`{"name": customer.first & " " & customer.last}`, `{"name":"Grace Hopper"}`},
		{`lines.{"p": product, "total": price * qty}`, `[{"p":"Hat","total":68.9},{"p":"Scarf","total":21.99},{"p":"Gloves","total":28.5}]`},
		{`[lines.product]`, `["Hat","Scarf","Gloves"]`},
		{`lines.[product]`, `[["Hat"],["Scarf"],["Gloves"]]`},
		{`{"a": missing}`, `{}`},
		{`lines{product: qty}`, `{"Hat":2,"Scarf":1,"Gloves":3}`},
		{`lines{"all": $sum(qty)}`, `{"all":6}`},
		{`lines^(price).product`, `["Gloves","Scarf","Hat"]`},
		{`lines^(>qty).product`, `["Gloves","Hat","Scarf"]`},
	})
}

func TestFunctionsAndLambdas(t *testing.T) {
	runCases(t, order, map[string]any{"rate": 0.2}, []evalCase{
		{`$sum(lines.(price * qty))`, `119.39`},
		{`$count(lines)`, `3`},
		{`$max(lines.price)`, `34.45`},
		{`$average([1, 2, 3, 4])`, `2.5`},
		{`$string(lines[0].qty)`, `"2"`},
		{`$uppercase(customer.first)`, `"GRACE"`},
		{`customer.first.$lowercase()`, `"grace"`},
		{`$substring("Hopper", 1, 3)`, `"opp"`},
		{`$join(lines.product, ", ")`, `"Hat, Scarf, Gloves"`},
		{`$split("a-b-c", "-")`, `["a","b","c"]`},
		{`$replace("2024-01-31", /(\d+)-(\d+)-(\d+)/, "$3.$2.$1")`, `"31.01.2024"`},
		{`$match("a1b22", /\d+/).match`, `["1","22"]`},
		{`$contains("Hopper", /opp/)`, `true`},
		{`$round(2.5)`, `2`},
		{`$round(3.5)`, `4`},
		{`$round(1.255, 2)`, `1.26`},
		{`$formatNumber(1234.5, "#,##0.00")`, `"1,234.50"`},
		{`$formatBase(10, 2)`, `"1010"`},
		{`$number("12.5") + 1`, `13.5`},
		{`$boolean([])`, `false`},
		{`$exists(note)`, `true`},
		{`$keys(customer)`, `["first","last","phones"]`},
		{`$merge([{"a": 1}, {"b": 2}])`, `{"a":1,"b":2}`},
		{`$map([1, 2, 3], function($v) { $v * 2 })`, `[2,4,6]`},
		{`$filter(lines, function($l) { $l.qty > 1 }).product`, `["Hat","Gloves"]`},
		{`$reduce([1, 2, 3], function($a, $b) { $a + $b })`, `6`},
		{`$sort(lines, function($a, $b) { $a.price > $b.price }).product`, `["Gloves","Scarf","Hat"]`},
		{`($twice := function($f, $x) { $f($f($x)) }; $twice(function($n) { $n + 3 }, 1))`, `7`},
		{`($add := function($a, $b) { $a + $b }; $inc := $add(?, 1); $inc(41))`, `42`},
		{`lines.qty ~> $sum()`, `6`},
		{`($f := $uppercase ~> $substring(?, 0, 2); $f("grace"))`, `"GR"`},
		{`lines[0].price * (1 + $rate)`, `41.34`},
		{`$fromMillis(0)`, `"1970-01-01T00:00:00.000Z"`},
		{`$toMillis("1970-01-02T00:00:00Z")`, `86400000`},
		{`$fromMillis(86400000, "[D01]/[M01]/[Y0001] [H01]:[m01]")`, `"02/01/1970 00:00"`},
		{`$ ~> |customer|{"first": "G."}, ["phones"]|`, `{"id":"o-1","customer":{"first":"G.","last":"Hopper"},"lines":[{"product":"Hat","price":34.45,"qty":2,"colours":["red","blue"]},{"product":"Scarf","price":21.99,"qty":1,"colours":["green"]},{"product":"Gloves","price":9.5,"qty":3}],"paid":false,"note":null}`},
	})
}

// TestTransformDoesNotModifyInput checks that a transform works on a copy.
func TestTransformDoesNotModifyInput(t *testing.T) {
	in := mustJSON(t, `{"a": {"b": 1}}`)
	e, err := Compile(`$ ~> |a|{"b": 2}|`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Eval(context.Background(), in, nil); err != nil {
		t.Fatal(err)
	}
	if got := in.(map[string]any)["a"].(map[string]any)["b"]; got != 1.0 {
		t.Errorf("input a.b = %v after transform, want 1", got)
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		expr     string
		code     string
		position int
	}{
		{`1 +`, "S0207", 3},
		{`"abc`, "S0101", 1},
		{`[1, 2`, "S0203", 5},
		{`{"a" 1}`, "S0202", 6},
		{`a.1`, "S0213", 3},
		{`1 := 2`, "S0212", 4},
		{`function($x, 1) { $x }`, "S0208", 14},
		{`"a" + 1`, "T2001", 5},
		{`1 - "b"`, "T2002", 3},
		{`1 < "2"`, "T2009", 3},
		{`$sum("x")`, "T0412", 5},
		{`$uppercase(1)`, "T0410", 11},
		{`$nope(1)`, "T1006", 6},
		{`$error("stop")`, "D3137", 7},
		{`$number("x")`, "D3030", 8},
		{`{"k": 1, "k": 2}`, "D1009", 1},
		{`[1..20000000]`, "D2014", 4},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			e, err := Compile(c.expr)
			if err == nil {
				_, err = e.Eval(context.Background(), nil, nil)
			}
			var je *Error
			if !errors.As(err, &je) {
				t.Fatalf("%q: got error %v, want a *Error %s", c.expr, err, c.code)
			}
			if je.Code != c.code || je.Position != c.position {
				t.Errorf("%q: got %s at %d (%v), want %s at %d", c.expr, je.Code, je.Position, je, c.code, c.position)
			}
			if !strings.Contains(je.Error(), c.code) || je.Message == "" {
				t.Errorf("%q: error text %q lacks the code or a message", c.expr, je.Error())
			}
		})
	}
}

func TestUndefinedIsNotNull(t *testing.T) {
	in := mustJSON(t, `{"a": null}`)
	cases := []struct {
		expr          string
		wantUndefined bool
	}{
		{`a`, false},
		{`b`, true},
		{`$exists(a)`, false},
	}
	for _, c := range cases {
		e, err := Compile(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Eval(context.Background(), in, nil)
		if err != nil {
			t.Fatal(err)
		}
		if IsUndefined(got) != c.wantUndefined {
			t.Errorf("Eval(%q) = %#v, undefined = %v, want %v", c.expr, got, IsUndefined(got), c.wantUndefined)
		}
	}
}

func TestWithFunctionAndBindings(t *testing.T) {
	partition := func(_ context.Context, args []any) (any, error) { return "aws", nil }
	join := func(_ context.Context, args []any) (any, error) {
		parts := make([]string, 0, len(args))
		for _, a := range args {
			s, _ := a.(string)
			parts = append(parts, s)
		}
		return strings.Join(parts, "+"), nil
	}
	e, err := Compile(`{"p": $partition(), "j": $glue($states.input.a, "z"), "n": $states.input.items[price > 10].name, "b": $bound(1)}`,
		WithFunction("partition", partition), WithFunction("glue", join))
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]any{"input": mustJSON(t, `{"a": "x", "items": [{"name": "A", "price": 5}, {"name": "B", "price": 15}]}`)}
	// a binding may be a plain func literal as well as a Function
	bound := func(_ context.Context, args []any) (any, error) { return args[0].(float64) + 1, nil }
	got, err := e.Eval(context.Background(), nil, map[string]any{"states": states, "bound": bound})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"p": "aws", "j": "x+z", "n": "B", "b": 2.0}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

func TestBounds(t *testing.T) {
	cases := []struct {
		name string
		expr string
		opts []Option
		code string
	}{
		{"recursion", `($f := function($n) { 1 + $f($n + 1) }; $f(0))`, nil, "U1001"},
		{"tail recursion", `($f := function($n) { $f($n + 1) }; $f(0))`, nil, "U1001"},
		{"steps", `$sum([1..100000].($ * 2))`, []Option{WithMaxSteps(10000)}, "U1002"},
		{"depth option", `((((((1))))))`, []Option{WithMaxDepth(3)}, "U1001"},
		{"string doubling", `($f := function($s, $n) { $n = 0 ? $s : $f($s & $s, $n - 1) }; $f("x", 60))`, []Option{WithMaxSize(1<<16, 0)}, "U1003"},
		{"array doubling", `($f := function($a, $n) { $n = 0 ? $a : $f($append($a, $a), $n - 1) }; $f([1], 60))`, []Option{WithMaxSize(0, 1<<12)}, "U1003"},
		{"huge pad", `$pad("x", 1e12)`, nil, "U1003"},
		{"shared object result", `$reduce([1..60], function($a, $i) { {"l": $a, "r": $a} }, {})`, []Option{WithMaxSteps(100000)}, "U1002"},
		{"shared object equality", `($t := $reduce([1..60], function($a, $i) { {"l": $a, "r": $a} }, {}); $t = $t)`, []Option{WithMaxSteps(100000)}, "U1002"},
		{"shared object string", `$length($string($reduce([1..60], function($a, $i) { [[$a], [$a]] }, [])))`, []Option{WithMaxSteps(100000)}, "U1002"},
		{"shared object in an error message", `($t := $reduce([1..60], function($a, $i) { {"l": $a, "r": $a} }, {}); $t < 1)`, nil, "T2010"},
		{"shared array lookup", `$reduce([1..60], function($a, $i) { [[$a], [$a]] }, []).foo`, []Option{WithMaxSteps(100000)}, "U1002"},
		{"shared array boolean", `$boolean($reduce([1..60], function($a, $i) { [[$a], [$a]] }, []))`, []Option{WithMaxSteps(100000)}, "U1002"},
		{"shared array spread", `$count($spread($reduce([1..60], function($a, $i) { [[$a], [$a]] }, [])))`, []Option{WithMaxSteps(100000)}, "U1002"},
		{"shared object descendants", `$count($reduce([1..60], function($a, $i) { {"l": $a, "r": $a} }, {}).**)`, []Option{WithMaxSteps(100000)}, "U1002"},
		{"string bound option", `$join([1..100].$string(), "")`, []Option{WithMaxSize(64, 0)}, "U1003"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := Compile(c.expr, c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Eval(context.Background(), nil, nil)
			var je *Error
			if !errors.As(err, &je) || je.Code != c.code {
				t.Errorf("got %v, want error %s", err, c.code)
			}
		})
	}
}

func TestCancellation(t *testing.T) {
	e, err := Compile(`$count([1..1000000].($ + 1))`)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = e.Eval(ctx, nil, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, err = e.Eval(ctx, nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want context.DeadlineExceeded", err)
	}
}

func TestParseDepthBounded(t *testing.T) {
	expr := strings.Repeat("(", 10000) + "1" + strings.Repeat(")", 10000)
	_, err := Compile(expr)
	var je *Error
	if !errors.As(err, &je) || je.Code != "U1001" {
		t.Errorf("Compile of 10000 nested parentheses: got %v, want a nesting error", err)
	}
}

// TestConcurrentEval runs one compiled expression from several goroutines
// (go test -race checks that an Expr is not mutated by Eval).
func TestConcurrentEval(t *testing.T) {
	e, err := Compile(`$sum(lines.(price * qty)) & "/" & $count(lines[qty > 1])`)
	if err != nil {
		t.Fatal(err)
	}
	in := mustJSON(t, order)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := e.Eval(context.Background(), in, nil)
			if err != nil {
				errs <- err
				return
			}
			if got != "119.39/2" {
				errs <- errors.New("got " + got.(string))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// library is a document in the shape of the documentation's join examples:
// books and loans referring to them by id.
const library = `{
  "books": [{"id": "b1", "title": "Dune", "authors": ["Herbert"]}, {"id": "b2", "title": "Emma", "authors": ["Austen"]}],
  "loans": [{"book": "b2", "who": "Ann"}, {"book": "b1", "who": "Bob"}, {"book": "b2", "who": "Cy"}]
}`

func TestBindingsAndParent(t *testing.T) {
	runCases(t, library, nil, []evalCase{
		{`books#$i.{"n": $i, "t": title}`, `[{"n":0,"t":"Dune"},{"n":1,"t":"Emma"}]`},
		{`loans@$l.books@$b[$l.book = $b.id].{"who": $l.who, "title": $b.title}`, `[{"who":"Ann","title":"Emma"},{"who":"Bob","title":"Dune"},{"who":"Cy","title":"Emma"}]`},
		{`loans@$l.books@$b[$l.book = $b.id]{$b.title: $count($l)}`, `{"Emma":2,"Dune":1}`},
		{`books.authors.{"author": $, "title": %.title}`, `[{"author":"Herbert","title":"Dune"},{"author":"Austen","title":"Emma"}]`},
		{`books.authors.%.%.loans[0].who`, `"Ann"`},
	})
}

func TestKeyOrderOfBuiltObjects(t *testing.T) {
	runCases(t, `{}`, nil, []evalCase{
		{`$string({"z": 1, "a": 2, "m": {"y": 3, "b": 4}})`, `"{\"z\":1,\"a\":2,\"m\":{\"y\":3,\"b\":4}}"`},
		{`$keys({"z": 1, "a": 2})`, `["z","a"]`},
		{`$string({"b": 1, "10": 2, "2": 3})`, `"{\"2\":3,\"10\":2,\"b\":1}"`},
		{`$string($merge([{"z": 1}, {"a": 2}]))`, `"{\"z\":1,\"a\":2}"`},
	})
}

func TestRegexAndDates(t *testing.T) {
	runCases(t, `{"log": "ERROR 42 at 10:15; WARN 7 at 11:00"}`, nil, []evalCase{
		{`$match(log, /(ERROR|WARN) (\d+)/).groups[1]`, `["42","7"]`},
		{`$split(log, /; ?/)`, `["ERROR 42 at 10:15","WARN 7 at 11:00"]`},
		{`$replace(log, /\d+:\d+/, "<time>")`, `"ERROR 42 at <time>; WARN 7 at <time>"`},
		{`$contains(log, /warn/i)`, `true`},
		{`$fromMillis(1700000000000, "[FNn], [D1o] [MNn] [Y] [H01]:[m01]")`, `"Tuesday, 14th November 2023 22:13"`},
		{`$formatInteger(2023, "W")`, `"TWO THOUSAND AND TWENTY-THREE"`},
		{`$toMillis("14/11/2023", "[D01]/[M01]/[Y0001]")`, `1699920000000`},
	})
}

// Every $now() and $millis() of one evaluation is the same instant, and the
// bindings are read where they are: an expression that assigns a variable of
// the same name does not change the caller's map.
func TestOneInstantPerEvaluationAndBindingsUntouched(t *testing.T) {
	e, err := Compile(`($a := $now(); $b := $millis(); $slow := $sum([1..20000]); $c := $now(); $d := $millis(); $x := 5; [$a = $c, $b = $d, $x])`)
	if err != nil {
		t.Fatal(err)
	}
	bindings := map[string]any{"x": float64(1)}
	got, err := e.Eval(context.Background(), nil, bindings)
	if err != nil {
		t.Fatal(err)
	}
	if want := []any{true, true, float64(5)}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if bindings["x"] != float64(1) || len(bindings) != 1 {
		t.Errorf("the bindings changed: %v", bindings)
	}
}
