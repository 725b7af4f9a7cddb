#pragma once
/// @file
/// A very small SVG 1.1 writer for the demo's pictures: polylines, paths, circles and text in
/// panels that map metres to pixels (y up in metres, y down in SVG).

#include <cstdio>
#include <string>
#include <vector>

namespace track_gen_examples {

/// A 2D point in metres.
struct pt2 {
  float x, y;
};

/// Maps a rectangle of the plane [m] onto a square-ish panel of the picture [px], keeping the
/// aspect ratio and flipping y (SVG's y axis points down).
struct panel_map {
  float origin_x = 0, origin_y = 0;  ///< top-left corner of the panel [px]
  float size_x = 1, size_y = 1;      ///< panel size [px]
  float min_x = 0, max_y = 0;        ///< top-left corner of the fitted rectangle [m]
  float scale = 1;                   ///< px per metre
  float pad_x = 0, pad_y = 0;        ///< centring offsets [px]

  /// Fits [lo, hi] (metres) into the panel with a margin of `margin_px` on each side.
  static panel_map fit(float ox, float oy, float w, float h, pt2 lo, pt2 hi, float margin_px) {
    panel_map m;
    m.origin_x = ox;
    m.origin_y = oy;
    m.size_x = w;
    m.size_y = h;
    const float span_x = hi.x - lo.x > 1e-6f ? hi.x - lo.x : 1.0f;
    const float span_y = hi.y - lo.y > 1e-6f ? hi.y - lo.y : 1.0f;
    const float sx = (w - 2 * margin_px) / span_x;
    const float sy = (h - 2 * margin_px) / span_y;
    m.scale = sx < sy ? sx : sy;
    m.min_x = lo.x;
    m.max_y = hi.y;
    m.pad_x = margin_px + 0.5f * ((w - 2 * margin_px) - m.scale * span_x);
    m.pad_y = margin_px + 0.5f * ((h - 2 * margin_px) - m.scale * span_y);
    return m;
  }
  pt2 operator()(pt2 p) const {
    return {origin_x + pad_x + (p.x - min_x) * scale, origin_y + pad_y + (max_y - p.y) * scale};
  }
};

/// Accumulates SVG elements in memory and writes the document in one go.
class svg_document {
 public:
  svg_document(int width, int height) : width_(width), height_(height) {}

  /// Open (or, with `closed`, closed) polyline through `pts` [px].
  void polyline(const std::vector<pt2>& pts, bool closed, const char* stroke, float width,
                const char* extra = "") {
    if (pts.empty()) return;
    body_ += closed ? "<polygon" : "<polyline";
    body_ += " fill=\"none\" stroke=\"";
    body_ += stroke;
    body_ += "\" stroke-width=\"" + num(width) + "\" " + extra + " points=\"";
    for (const pt2& p : pts) body_ += num(p.x) + "," + num(p.y) + " ";
    body_ += "\"/>\n";
  }

  /// Filled area between closed loops `outer` and `inner` [px] (even-odd rule: a ring).
  void ring(const std::vector<pt2>& outer, const std::vector<pt2>& inner, const char* fill) {
    body_ += "<path fill-rule=\"evenodd\" stroke=\"none\" fill=\"";
    body_ += fill;
    body_ += "\" d=\"" + loop(outer) + loop(inner) + "\"/>\n";
  }

  void line(pt2 a, pt2 b, const char* stroke, float width, const char* extra = "") {
    body_ += "<line x1=\"" + num(a.x) + "\" y1=\"" + num(a.y) + "\" x2=\"" + num(b.x) + "\" y2=\"" + num(b.y) +
             "\" stroke=\"" + stroke + "\" stroke-width=\"" + num(width) + "\" " + extra + "/>\n";
  }

  void circle(pt2 c, float r, const char* fill) {
    body_ += "<circle cx=\"" + num(c.x) + "\" cy=\"" + num(c.y) + "\" r=\"" + num(r) + "\" fill=\"" + fill + "\"/>\n";
  }

  void rect(float x, float y, float w, float h, const char* fill, const char* stroke) {
    body_ += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" + num(h) +
             "\" fill=\"" + fill + "\" stroke=\"" + stroke + "\"/>\n";
  }

  /// Text at `at` [px]; `text` must not contain markup characters (<, >, &). Runs of spaces are
  /// kept as written: SVG collapses whitespace by default, so both the SVG 1.1 attribute
  /// (xml:space) and the CSS property (white-space: pre) that renderers honour are set.
  void text(pt2 at, float size, const std::string& text, const char* fill = "#222") {
    body_ += "<text x=\"" + num(at.x) + "\" y=\"" + num(at.y) + "\" font-family=\"sans-serif\" font-size=\"" +
             num(size) + "\" fill=\"" + fill + "\" xml:space=\"preserve\" style=\"white-space:pre\">" + text +
             "</text>\n";
  }

  /// Writes the document; false when the file cannot be written.
  bool save(const std::string& path) const {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return false;
    std::fprintf(f,
                 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
                 "viewBox=\"0 0 %d %d\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
                 width_, height_, width_, height_);
    const bool ok = std::fwrite(body_.data(), 1, body_.size(), f) == body_.size();
    std::fprintf(f, "</svg>\n");
    return std::fclose(f) == 0 && ok;
  }

 private:
  static std::string num(float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(v));
    return buf;
  }
  static std::string loop(const std::vector<pt2>& pts) {
    std::string d;
    for (std::size_t i = 0; i < pts.size(); ++i) d += (i == 0 ? "M" : "L") + num(pts[i].x) + " " + num(pts[i].y) + " ";
    return pts.empty() ? d : d + "Z ";
  }

  int width_, height_;
  std::string body_;
};

}  // namespace track_gen_examples
