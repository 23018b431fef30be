/* The charts of report.html as inline SVG: stacked bars and polylines on
 * a fixed canvas, the axis' top labelled, nothing laid out. */
#include "report/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W 1000.0           /* canvas */
#define H 260.0
#define L 70.0             /* plot area's left, right, top, bottom */
#define R 990.0
#define T 30.0
#define B 220.0

/* A round number >= v for the axis' top. */
static double nice_top(double v)
{
	if (!(v > 0))
		return 1;
	double p = pow(10, floor(log10(v)));
	for (int m = 1; m <= 10; m *= 2)
		if (v <= m * p)
			return m * p;
	return 10 * p;
}

static void frame(struct strbuf *sb, const char *title, const char *unit, double top)
{
	sb_printf(sb, "<figure><svg viewBox=\"0 0 %.0f %.0f\" width=\"100%%\" role=\"img\"><title>", W, H);
	report_html_text(sb, title);
	sb_puts(sb, "</title>");
	for (int i = 0; i <= 4; i++) {
		double y = B - (B - T) * i / 4;
		sb_printf(sb, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
			  "<text x=\"%.0f\" y=\"%.1f\" class=\"ax\" text-anchor=\"end\">%.4g</text>",
			  L, R, y, y, L - 6, y + 4, top * i / 4);
	}
	sb_printf(sb, "<text x=\"%.0f\" y=\"16\" class=\"ax\">", L);
	report_html_text(sb, unit);
	sb_puts(sb, "</text>");
}

static void legend(struct strbuf *sb, const struct report_series *s, size_t ns)
{
	double x = L;
	for (size_t k = 0; k < ns; k++) {
		sb_printf(sb, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" height=\"10\" fill=\"%s\"/>"
			  "<text x=\"%.0f\" y=\"%.0f\" class=\"ax\">", x, H - 14, s[k].color, x + 14,
			  H - 5);
		report_html_text(sb, s[k].name);
		sb_puts(sb, "</text>");
		x += 30 + 7.0 * (double)strlen(s[k].name);
	}
}

static void caption(struct strbuf *sb, const char *title)
{
	sb_puts(sb, "</svg><figcaption>");
	report_html_text(sb, title);
	sb_puts(sb, "</figcaption></figure>\n");
}

void report_svg_bars(struct strbuf *sb, const char *title, const char *unit,
		     const char *const *labels, size_t n, const struct report_series *s,
		     size_t ns, const int *mark)
{
	double top = 0;
	for (size_t i = 0; i < n; i++) {
		double sum = 0;
		for (size_t k = 0; k < ns; k++)
			sum += s[k].v[i] > 0 ? s[k].v[i] : 0;
		top = sum > top ? sum : top;
	}
	top = nice_top(top);
	frame(sb, title, unit, top);
	double slot = (R - L) / (double)(n ? n : 1), bw = slot * 0.8;
	size_t every = n / 25 + 1;          /* labels that fit */
	for (size_t i = 0; i < n; i++) {
		double x = L + slot * (double)i + slot * 0.1, y = B;
		for (size_t k = 0; k < ns; k++) {
			double h = s[k].v[i] > 0 ? (B - T) * s[k].v[i] / top : 0;
			y -= h;
			sb_printf(sb, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				  "fill=\"%s\"><title>", x, y, bw, h, s[k].color);
			report_html_text(sb, labels[i]);
			sb_printf(sb, " %s: %.4g</title></rect>", s[k].name, s[k].v[i]);
		}
		int m = mark && mark[i];
		if (i % every == 0 || m) {
			sb_printf(sb, "<text x=\"%.1f\" y=\"%.0f\" class=\"%s\" text-anchor=\"middle\">",
				  x + bw / 2, B + 14, m ? "ax slow" : "ax");
			report_html_text(sb, labels[i]);
			sb_puts(sb, m ? " slow</text>" : "</text>");
		}
	}
	legend(sb, s, ns);
	caption(sb, title);
}

void report_svg_lines(struct strbuf *sb, const char *title, const char *xunit,
		      const char *unit, const double *x, size_t n,
		      const struct report_series *s, size_t ns)
{
	if (n < 2) {              /* no line to draw */
		sb_puts(sb, "<p>");
		report_html_text(sb, title);
		sb_printf(sb, ": %zu sample%s only.</p>\n", n, n == 1 ? "" : "s");
		return;
	}
	double top = 0;
	for (size_t k = 0; k < ns; k++)
		for (size_t i = 0; i < n; i++)
			top = s[k].v[i] > top ? s[k].v[i] : top;
	top = nice_top(top);
	frame(sb, title, unit, top);
	double x0 = n ? x[0] : 0, x1 = n ? x[n - 1] : 1;
	double span = x1 > x0 ? x1 - x0 : 1;
	size_t buckets = n > REPORT_MAX_POINTS ? REPORT_MAX_POINTS : n;
	for (size_t k = 0; k < ns; k++) {
		sb_printf(sb, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
			  s[k].color);
		for (size_t b = 0; b < buckets; b++) {
			size_t lo = b * n / buckets, hi = (b + 1) * n / buckets;
			double v = s[k].v[lo];
			for (size_t i = lo + 1; i < hi; i++)
				v = s[k].v[i] > v ? s[k].v[i] : v;
			if (!isfinite(v))
				continue;
			sb_printf(sb, "%.1f,%.1f ", L + (R - L) * (x[lo] - x0) / span,
				  B - (B - T) * v / top);
		}
		sb_puts(sb, "\"/>");
	}
	sb_printf(sb, "<text x=\"%.0f\" y=\"%.0f\" class=\"ax\">%.4g</text>"
		  "<text x=\"%.0f\" y=\"%.0f\" class=\"ax\" text-anchor=\"end\">%.4g ", L, B + 14, x0,
		  R, B + 14, x1);
	report_html_text(sb, xunit);
	sb_puts(sb, "</text>");
	legend(sb, s, ns);
	caption(sb, title);
}
