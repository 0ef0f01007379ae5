#include "plots.hpp"

#include <stdexcept>

namespace sa {

LinePlot loss_plot(const std::vector<double>& training_loss, std::size_t every,
                   const std::vector<std::size_t>& checkpoints, const std::vector<double>& held_out_loss)
{
    if (training_loss.empty() || every == 0 || checkpoints.size() != held_out_loss.size()) {
        throw std::invalid_argument("loss_plot: needs at least one training loss, a distance of at least 1 between "
                                    "points and one held-out loss per checkpoint");
    }
    Series training{.name = "training"};
    for (std::size_t step = 0; step < training_loss.size(); ++step) {
        if (step % every == 0 || step + 1 == training_loss.size()) {
            training.x.push_back(static_cast<double>(step));
            training.y.push_back(training_loss[step]);
        }
    }
    Series held_out{.name = "held-out"};
    for (std::size_t k = 0; k < checkpoints.size(); ++k) {
        held_out.x.push_back(static_cast<double>(checkpoints[k]));
        held_out.y.push_back(held_out_loss[k]);
    }
    return LinePlot{.title = "Loss during training", .x_label = "step", .y_label = "loss L (log scale)",
                    .series = {training, held_out}, .log_y = true};
}

LinePlot variance_plot(const std::vector<VarianceRow>& rows)
{
    Series raw;
    raw.name = "q·k (raw)";
    Series scaled;
    scaled.name = "q·k / √d_k (scaled)";
    for (const auto& row : rows) {
        raw.x.push_back(static_cast<double>(row.key_dim));
        raw.y.push_back(row.raw_variance);
        scaled.x.push_back(static_cast<double>(row.key_dim));
        scaled.y.push_back(row.scaled_variance);
    }
    LinePlot plot;
    plot.title = "Variance of the scores against d_k";
    plot.x_label = "d_k";
    plot.y_label = "sample variance";
    plot.series = {raw, scaled};
    plot.log_x = true;
    plot.log_y = true;
    return plot;
}

LinePlot starvation_plot(const std::vector<StarvationRow>& rows)
{
    Series scores_raw{"|dS'|, raw", {}, {}};
    Series scores_scaled{"|dS'|, scaled by 1/√d_k", {}, {}};
    Series w_query_raw{"|dW_Q|, raw", {}, {}};
    Series w_query_scaled{"|dW_Q|, scaled by 1/√d_k", {}, {}};
    for (const auto& row : rows) {
        const auto key_dim = static_cast<double>(row.key_dim);
        for (Series* series : {&scores_raw, &scores_scaled, &w_query_raw, &w_query_scaled}) {
            series->x.push_back(key_dim);
        }
        scores_raw.y.push_back(row.raw.scores_median);
        scores_scaled.y.push_back(row.scaled.scores_median);
        w_query_raw.y.push_back(row.raw.w_query_median);
        w_query_scaled.y.push_back(row.scaled.w_query_median);
    }
    LinePlot plot;
    plot.title = "Median gradient size against d_k";
    plot.x_label = "d_k";
    plot.y_label = "median size of the gradient";
    plot.series = {scores_raw, scores_scaled, w_query_raw, w_query_scaled};
    plot.log_x = true;
    plot.log_y = true;
    return plot;
}

LinePlot rope_offset_plot(const Matrix& table, double plain_score)
{
    if (table.empty() || table.rows() != table.cols()) {
        throw ShapeError(fmt::format("rope_offset_plot: the table is {}; it must be square and not empty",
                                     shape(table)));
    }
    const auto last = static_cast<int>(table.rows()) - 1;
    Series rotary{"with rotary positions"};
    Series plain{"without positions"};
    for (int offset = -last; offset <= last; ++offset) {
        const int a = offset < 0 ? -offset : 0;  // the first cell of this diagonal
        rotary.x.push_back(offset);
        rotary.y.push_back(table(static_cast<std::size_t>(a), static_cast<std::size_t>(a + offset)));
        plain.x.push_back(offset);
        plain.y.push_back(plain_score);
    }
    return {.title = "The score depends only on the offset b − a", .x_label = "offset b − a",
            .y_label = "score q·k", .series = {rotary, plain}};
}

}  // namespace sa
